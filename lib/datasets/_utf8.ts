/**
 * Where a byte chunk stops being UTF-8 (kept here for the dataset readers; the code is
 * lib/prompts/utf8_lines.ts, shared with the prompt-set reader).
 * @module
 */
export { firstInvalidUtf8, newlinesBefore, Utf8LineDecoder } from "../prompts/utf8_lines.ts";
