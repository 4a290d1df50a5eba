/**
 * The per-request state the SSE parser feeds: it reads each chunk once (JSON.parse plus a few
 * property reads), decides whether it is a token-bearing event, and keeps times, ids, text,
 * usage and finish_reason. It is written for the hot path: no closures or objects per event.
 *
 * A token-bearing event (CONTRACTS.md) has non-empty `content`, `reasoning_content`, `reasoning`
 * or tool-call arguments (chat), non-empty `text` (completions), or non-empty streamed ids. An empty
 * role chunk, a finish-only chunk or a usage-only chunk is not a token.
 *
 * Decisions for shapes real servers send:
 * - Nothing after `data: [DONE]` counts: later events are neither tokens nor failures (the OpenAI
 *   SDK stops reading there too).
 * - Usage: the last usage block that carries an integer `completion_tokens` wins (trtllm and vLLM
 *   `continuous_usage_stats` repeat it on every chunk; a later block without the field does not
 *   erase a good one).
 * - Several choices (`n` > 1, `choices[].index` 1, 2, ...): every choice is measured together. An
 *   event is a token event when any choice carries a token, ids are summed over choices, and
 *   `usage.completion_tokens` (which servers sum over choices) stays comparable with the ids. Text
 *   of all choices is appended in arrival order. ik itself never asks for n > 1.
 */
import { scrubSecret } from "../evidence/redact.ts";
import { scrubText } from "../evidence/scrub.ts";
import type { SseSink } from "../sse/mod.ts";
import { FAULT_TTFT_PLUS_5MS } from "./_fault.ts";
import { TextParts } from "./_text_parts.ts";
import { EventLog } from "./_event_log.ts";
import { IdColumn } from "./_id_column.ts";
import { appendField, chunkScan, fieldText, holdsDone, isDone, nonEmpty, pushIds } from "./_chunk_scan.ts";

export { EventLog, MAX_RESERVED_EVENTS, TICKS_PER_MS } from "./_event_log.ts";
import { errorInfoFromJson } from "./error_body.ts";
import type { FailureKind } from "./types.ts";

const OPEN_BRACKET = 91;
const TOKEN_ID_PREFIX = "token_id:";

// deno-lint-ignore no-explicit-any
type Json = any;

function snippet(s: string): string {
  // Scrubbed before it is cut: a secret cut in two would no longer be found whole afterwards.
  const flat = scrubText(s).replace(/\s+/g, " ");
  return flat.length > 80 ? flat.slice(0, 79) + "…" : flat;
}

/** Collects what one response stream says. */
export class StreamState implements SseSink {
  /** Arrival time of the read being parsed; the loop sets it before each push. */
  tRead = 0;
  readonly log: EventLog;
  nSseEvents = 0;
  sawDone = false;
  tDone: number | null = null;
  tFirst: number | null = null;
  tLast: number | null = null;
  /** Content (chat) or text (completions) of every choice, in arrival order. */
  readonly text = new TextParts();
  /** Reasoning content, in arrival order; null until the first (most responses have none). */
  reasoning: TextParts | null = null;
  /** Tool-call arguments, in arrival order; null until the first. */
  toolArguments: TextParts | null = null;
  /** The streamed token ids, in order. */
  readonly tokenIds: IdColumn;
  nIds = 0;
  usage: Record<string, unknown> | null = null;
  finishReason: string | null = null;
  /** When the first chunk with a finish_reason arrived (an EOS chunk carries no text, but usage counts its token). */
  tFinish: number | null = null;
  /** The engine's own per-request timings object (llama.cpp `timings`), the last one seen. */
  serverTimings: Record<string, unknown> | null = null;
  /** First content token after reasoning tokens, or null (no reasoning, or content came first). */
  tFirstContent: number | null = null;
  private contentFirst = false;
  failKind: FailureKind | null = null;
  failMessage: string | null = null;
  /**
   * The API key, scrubbed from error text before it is cut short (a cut could keep half of it);
   * the caller scrubs the final text, reasoning and message too.
   */
  secret: string | null = null;

  /** @param expectedEvents token events the request may bring (its max_tokens), if known */
  constructor(expectedEvents?: number | null) {
    this.log = new EventLog(expectedEvents);
    this.tokenIds = new IdColumn(expectedEvents);
  }

  /** Records the first failure; later ones are ignored. */
  fail(kind: FailureKind, message: string): void {
    if (this.failKind === null) {
      this.failKind = kind;
      this.failMessage = message;
    }
  }

  /** {@link SseSink}: a line or event over the cap ends the request as `protocol`. */
  onOverflow(message: string): void {
    this.fail("protocol", message);
  }

  /** The data with the API key scrubbed (only error paths call it). */
  private clean(data: string): string {
    return this.secret !== null && data.includes(this.secret) ? scrubSecret(data, this.secret) : data;
  }

  /** The message of an error chunk, from the scrubbed text. */
  private errorText(data: string, obj: Json): string {
    const d = this.clean(data);
    if (d !== data) {
      try {
        obj = JSON.parse(d);
      } catch {
        return snippet(d);
      }
    }
    return errorInfoFromJson(obj)?.message ?? snippet(d);
  }

  /**
   * {@link SseSink}: one event's data as bytes. Takes it when it is `[DONE]`, comes after it or
   * after a failure, or is a chunk the byte reader is sure of (_chunk_scan.ts), with the effect
   * {@link onEvent} would have had; declines (false, nothing changed) anything else. Most token
   * events take this path: no string, parse tree or piece of text is made of them (issue 21: the
   * collector's work and the heap's growth between collections were mostly these).
   */
  onDataBytes(b: Uint8Array, start: number, end: number): boolean {
    if (this.sawDone) {
      this.nSseEvents++;
      return true;
    }
    if (isDone(b, start, end)) {
      this.nSseEvents++;
      this.sawDone = true;
      this.tDone = this.tRead;
      return true;
    }
    if (this.failKind !== null) {
      // After a failure only a `[DONE]` (also one with spaces around it: the text path trims) still
      // changes something: data that holds one goes the text path.
      if (holdsDone(b, start, end)) return false;
      this.nSseEvents++;
      return true;
    }
    const sc = chunkScan;
    if (!sc.scan(b, start, end)) return false;
    this.nSseEvents++;
    const textBefore = this.text.length;
    let tok = false, nIds = 0;
    for (let k = 0; k < sc.nChoices; k++) {
      const ch = sc.choices[k];
      if (ch.hasDelta) {
        if (nonEmpty(ch.content)) {
          appendField(this.text, b, ch.content);
          tok = true;
        }
        // As in delta(): reasoning_content, else reasoning, never both.
        if (nonEmpty(ch.reasoningContent)) {
          appendField(this.reasoning ??= new TextParts(), b, ch.reasoningContent);
          tok = true;
        } else if (nonEmpty(ch.reasoning)) {
          appendField(this.reasoning ??= new TextParts(), b, ch.reasoning);
          tok = true;
        }
      } else if (nonEmpty(ch.text)) {
        appendField(this.text, b, ch.text);
        tok = true;
      }
      if (ch.ids.start >= 0) nIds += pushIds(b, ch.ids.start, ch.ids.end, this.tokenIds);
      if (nonEmpty(ch.finishReason)) {
        this.finishReason = fieldText(b, ch.finishReason);
        this.tFinish ??= this.tRead;
      }
    }
    this.tokenEvent(tok, nIds, textBefore);
    return true;
  }

  /** {@link SseSink} entry point: one event's data. */
  onEvent(data: string, event: string): void {
    this.nSseEvents++;
    if (this.sawDone) return;
    if (data.charCodeAt(0) === OPEN_BRACKET && (data === "[DONE]" || data.trim() === "[DONE]")) {
      this.sawDone = true;
      this.tDone = this.tRead;
      return;
    }
    if (this.failKind !== null) return;
    // An event with empty data (a proxy's keep-alive, `data:` alone) carries no chunk: neither a
    // token nor a failure (the SSE spec dispatches it; openai-python and others skip it).
    if (event !== "error" && (data.length === 0 || (data.charCodeAt(0) <= 32 && data.trim().length === 0))) return;
    if (event === "error") {
      let obj: Json = null;
      try {
        obj = JSON.parse(data);
      } catch {
        // plain-text error event: keep the text
      }
      this.fail("protocol", `error event mid-stream: ${this.errorText(data, obj)}`);
      return;
    }
    let obj: Json;
    try {
      obj = JSON.parse(data);
    } catch (e) {
      this.fail("protocol", `malformed chunk '${snippet(this.clean(data))}': ${(e as Error).message}`);
      return;
    }
    if (obj === null || typeof obj !== "object" || Array.isArray(obj)) {
      this.fail("protocol", `malformed chunk '${snippet(this.clean(data))}': not a JSON object`);
      return;
    }
    const err = obj.error;
    if (err !== undefined && err !== null) {
      this.fail("protocol", `error event mid-stream: ${this.errorText(data, obj)}`);
      return;
    }
    const usage = obj.usage;
    if (
      usage !== undefined && usage !== null && typeof usage === "object" &&
      (this.usage === null || typeof usage.completion_tokens === "number")
    ) this.usage = usage;
    const tm = obj.timings;
    if (tm !== undefined && tm !== null && typeof tm === "object" && !Array.isArray(tm)) this.serverTimings = tm;
    let tok = false;
    let nIds = 0;
    const textBefore = this.text.length;
    const choices = obj.choices;
    if (choices === undefined || choices === null) {
      // A flat error object with no wrapper ({"object":"error","message":...}) is an error event too.
      if (obj.object === "error") {
        this.fail("protocol", `error event mid-stream: ${this.errorText(data, obj)}`);
        return;
      }
    } else {
      if (!Array.isArray(choices)) {
        this.fail("protocol", `malformed chunk '${snippet(data)}': 'choices' is not a list`);
        return;
      }
      for (let i = 0; i < choices.length; i++) {
        const ch = choices[i];
        if (ch === null || typeof ch !== "object") continue;
        const delta = ch.delta;
        if (delta !== undefined && delta !== null) {
          if (this.delta(delta)) tok = true;
        } else {
          const t = ch.text;
          if (typeof t === "string" && t.length !== 0) {
            this.text.append(t);
            tok = true;
          }
        }
        const ids = ch.token_ids;
        if (ids !== undefined && ids !== null && ids.length > 0) nIds += this.addIds(ids);
        else if (ch.logprobs !== undefined && ch.logprobs !== null) nIds += this.logprobIds(ch.logprobs);
        else if (ch.sglext !== undefined && ch.sglext !== null) nIds += this.addIds(ch.sglext.output_ids);
        const fr = ch.finish_reason;
        if (typeof fr === "string" && fr.length !== 0) {
          this.finishReason = fr;
          this.tFinish ??= this.tRead;
        }
      }
    }
    const ext = obj.sglext;
    if (nIds === 0 && ext !== undefined && ext !== null) nIds += this.addIds(ext.output_ids);
    this.tokenEvent(tok, nIds, textBefore);
  }

  /** Records a token event (one with a token or ids) at the read's time; `textBefore`: the text's length before the event. */
  private tokenEvent(tok: boolean, nIds: number, textBefore: number): void {
    if (tok || nIds > 0) {
      const t = this.tRead;
      this.log.push(t, nIds);
      if (this.tFirst === null) this.tFirst = FAULT_TTFT_PLUS_5MS ? t + 5 : t;
      this.tLast = t;
      if (this.text.length > textBefore && this.tFirstContent === null && !this.contentFirst) {
        // Time to first output: only when reasoning came first (a reasoning model's answer).
        if (this.reasoning !== null && this.reasoning.length > 0) this.tFirstContent = t;
        else this.contentFirst = true;
      }
      this.nIds += nIds;
    }
  }

  private delta(delta: Json): boolean {
    let tok = false;
    const c = delta.content;
    if (typeof c === "string" && c.length !== 0) {
      this.text.append(c);
      tok = true;
    }
    // vLLM copies `reasoning` into `reasoning_content`: take one of them, never both.
    const rc = delta.reasoning_content;
    if (typeof rc === "string" && rc.length !== 0) {
      (this.reasoning ??= new TextParts()).append(rc);
      tok = true;
    } else {
      const r = delta.reasoning;
      if (typeof r === "string" && r.length !== 0) {
        (this.reasoning ??= new TextParts()).append(r);
        tok = true;
      }
    }
    const calls = delta.tool_calls;
    if (calls !== undefined && calls !== null && calls.length > 0) {
      for (let i = 0; i < calls.length; i++) {
        const args = calls[i]?.function?.arguments;
        if (typeof args === "string" && args.length !== 0) {
          (this.toolArguments ??= new TextParts()).append(args);
          tok = true;
        }
      }
    }
    const legacy = delta.function_call?.arguments;
    if (typeof legacy === "string" && legacy.length !== 0) {
      (this.toolArguments ??= new TextParts()).append(legacy);
      tok = true;
    }
    return tok;
  }

  private addIds(ids: Json): number {
    if (!Array.isArray(ids)) return 0;
    let n = 0;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (typeof id === "number") {
        this.tokenIds.push(id);
        n++;
      }
    }
    return n;
  }

  /** Ids carried in logprobs: llama.cpp `content[].id`, vLLM `"token_id:N"` tokens (chat and completions). */
  private logprobIds(lp: Json): number {
    let n = 0;
    const content = lp.content;
    if (Array.isArray(content)) {
      for (let i = 0; i < content.length; i++) {
        const e = content[i];
        if (e === null || typeof e !== "object") continue;
        if (typeof e.id === "number") {
          this.tokenIds.push(e.id);
          n++;
        } else if (this.tokenIdString(e.token)) {
          n++;
        }
      }
      return n;
    }
    const tokens = lp.tokens;
    if (Array.isArray(tokens)) {
      for (let i = 0; i < tokens.length; i++) if (this.tokenIdString(tokens[i])) n++;
    }
    return n;
  }

  private tokenIdString(t: unknown): boolean {
    if (typeof t !== "string" || !t.startsWith(TOKEN_ID_PREFIX)) return false;
    const id = Number(t.slice(TOKEN_ID_PREFIX.length));
    if (!Number.isInteger(id)) return false;
    this.tokenIds.push(id);
    return true;
  }
}
