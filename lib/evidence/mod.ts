/**
 * Evidence records: redaction, the endpoint HMAC key, evidence ids and the store.
 * @module
 */
export { isSecretKey, REDACTED, redactObject, redactUrl, redactUrlsInText, scrubSecret } from "./redact.ts";
export {
  clearSecrets, isSecretFlag, knownSecrets, registerArgvSecrets, registerJsonSecrets, registerSecret, registerSecretEnv, scrubArgv, scrubbedJson, scrubJsonLine, scrubKnown,
  scrubText, scrubValue,
} from "./scrub.ts";
export { endpointKeyPath, endpointTag, loadEndpointKey, PROCESS_KEY_NOTE } from "./endpoint_key.ts";
export type { EndpointKey } from "./endpoint_key.ts";
export { newEvidenceId, parseEvidenceId } from "./evidence_id.ts";
export { fileSha256, integrityProblem, loadRecord, StagedRun, storeRoot } from "./store.ts";
export type { Artifact } from "./store.ts";
export { canonicalJson, canonicalSha256, normalizedJson } from "./canonical.ts";
export { buildRecord, type ClaimClass, type EvidenceRecord, RECORD_SCHEMA } from "./record.ts";
export { JsonlWriter, type JsonlWriterOptions } from "./jsonl_writer.ts";
export { checkWritable, guardWrite, isOutputError, isUnhandledWriteFailure, outputErrno, outputError, writeFailureStop, type WriteStop, writeWhole } from "./output_error.ts";
