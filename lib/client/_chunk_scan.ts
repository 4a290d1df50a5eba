/**
 * A byte-level reader of one streamed chunk (an SSE event's `data` as UTF-8 bytes) for the shape
 * nearly every token event has: `{"choices":[{"delta":{"content":"…"},"finish_reason":null,…}],…}`.
 * It validates the whole event as strict JSON (RFC 8259, as JSON.parse does) without building it:
 * no object tree, no string per field, no decoded copy of the event. It only notes where the few
 * fields the stream state reads are (content, reasoning, completion text, finish_reason, token ids).
 *
 * Whatever it is not sure of, it declines (returns false) and the caller parses the event the
 * general way: any JSON error, a non-null `usage`, `error`, `timings`, `sglext` or `logprobs`,
 * `token_ids` other than plain integers, tool calls, a missing or non-array `choices`, a choice or
 * delta that is not an object, more than {@link MAX_CHOICES} choices, a key of interest seen twice
 * or written with an escape, deep nesting (_json_bytes.ts), a top-level value that is not an object. So it never
 * decides anything the general path would decide differently; tests/client/chunk_scan.test.ts
 * checks that against every engine transcript and thousands of mutated events.
 * @module
 */

import type { TextParts } from "./_text_parts.ts";
import { COLON, Decline, EMPTY, JsonBytes, LBRACE, LBRACKET, NINE, QUOTE, RBRACE, RBRACKET, ZERO } from "./_json_bytes.ts";

/** Choices one event may carry on this path (ik never asks for n > 1; n = 2..4 still read here). */
export const MAX_CHOICES = 4;

/** Field names, as bytes, this reader looks for. */
const K = {
  choices: bytesOf("choices"),
  error: bytesOf("error"),
  usage: bytesOf("usage"),
  timings: bytesOf("timings"),
  sglext: bytesOf("sglext"),
  delta: bytesOf("delta"),
  text: bytesOf("text"),
  token_ids: bytesOf("token_ids"),
  logprobs: bytesOf("logprobs"),
  finish_reason: bytesOf("finish_reason"),
  content: bytesOf("content"),
  reasoning_content: bytesOf("reasoning_content"),
  reasoning: bytesOf("reasoning"),
  tool_calls: bytesOf("tool_calls"),
  function_call: bytesOf("function_call"),
};

function bytesOf(s: string): Uint8Array {
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

/** Where a string value lies: its bytes between the quotes, and whether it holds an escape. */
export interface StringSpan {
  /** First byte after the opening quote, or -1 when the field was absent or not a string. */
  start: number;
  /** The closing quote's index. */
  end: number;
  /** A backslash occurs inside (the value needs JSON unescaping). */
  escaped: boolean;
}

/** A choice's `token_ids`: a list of plain integers, their bytes between the brackets. */
export interface IdsSpan {
  /** First byte after `[`, or -1 when absent, null or empty. */
  start: number;
  /** The `]`'s index. */
  end: number;
}

/** What one choice carries. */
export interface ChoiceSpans {
  /** The choice has a non-null `delta` object (chat); else its `text` counts (completions). */
  hasDelta: boolean;
  content: StringSpan;
  reasoningContent: StringSpan;
  reasoning: StringSpan;
  text: StringSpan;
  finishReason: StringSpan;
  /** `token_ids` (vLLM's return_token_ids, ik's mock). */
  ids: IdsSpan;
}

function span(): StringSpan {
  return { start: -1, end: -1, escaped: false };
}

/** A reusable reader: {@link scan} one event, then read {@link choices} up to {@link nChoices}. */
export class ChunkScan extends JsonBytes {
  /** The choices of the last event scanned (the first {@link nChoices} are valid). */
  readonly choices: ChoiceSpans[] = Array.from({ length: MAX_CHOICES }, () => ({
    hasDelta: false,
    content: span(),
    reasoningContent: span(),
    reasoning: span(),
    text: span(),
    finishReason: span(),
    ids: { start: -1, end: -1 },
  }));
  /** Choices in the last event scanned. */
  nChoices = 0;
  /** The event's `choices` was read (a second one is declined). */
  private sawChoices = false;
  /** The choice being read, and whether its `delta` was met. */
  private ch: ChoiceSpans = this.choices[0];
  private sawDelta = false;

  /**
   * Reads `bytes[start, end)` as one event's data. True when it is a JSON object this reader is
   * sure of (the spans describe it); false when the general path must parse it.
   */
  scan(bytes: Uint8Array, start: number, end: number): boolean {
    this.b = bytes;
    this.end = end;
    this.nChoices = 0;
    try {
      let i = this.ws(start);
      if (i >= end || bytes[i] !== LBRACE) return false;
      i = this.topObject(i + 1);
      return this.ws(i) === end;
    } catch (e) {
      if (e === Decline.it) return false;
      throw e;
    } finally {
      this.b = EMPTY;
    }
  }

  /**
   * Reads an object's members from just after its `{` (at `level`: the event, a choice or a
   * delta) and returns the index after its `}`. A key with an escape is declined (it could spell a
   * key of interest).
   */
  private members(i: number, level: number): number {
    i = this.ws(i);
    if (i < this.end && this.b[i] === RBRACE) return i + 1;
    for (;;) {
      const keyEnd = this.str(this.ws(i));
      if (this.sEscaped) this.decline();
      const v = this.ws(this.expect(keyEnd, COLON));
      i = this.ws(level === TOP ? this.topMember(keyEnd, v) : level === CHOICE ? this.choiceMember(keyEnd, v) : this.deltaMember(keyEnd, v));
      if (!this.more(i, RBRACE)) return i + 1;
      i++;
    }
  }

  /** A value that must be null here (else declined); returns the index after it. */
  private mustBeNull(v: number): number {
    if (!this.isNull(v)) this.decline();
    return v + 4;
  }

  /** A string value noted into `s`, or any other value skipped (`s` then stays absent). */
  private stringOrSkip(v: number, s: StringSpan): number {
    if (s.start !== UNSEEN) this.decline(); // seen twice: JSON.parse keeps the last, this reader declines
    if (this.b[v] === QUOTE) {
      const after = this.str(v);
      s.start = this.sStart;
      s.end = after - 1;
      s.escaped = this.sEscaped;
      return after;
    }
    s.start = -1;
    return this.skip(v, 1);
  }

  private topObject(i: number): number {
    this.sawChoices = false;
    i = this.members(i, TOP);
    if (!this.sawChoices) this.decline();
    return i;
  }

  private topMember(keyEnd: number, v: number): number {
    if (this.keyIs(K.choices, keyEnd)) {
      if (this.sawChoices) this.decline();
      this.sawChoices = true;
      if (this.b[v] !== LBRACKET) this.decline(); // null or not a list: the general path decides
      return this.choiceList(v + 1);
    }
    if (this.keyIs(K.error, keyEnd) || this.keyIs(K.usage, keyEnd) || this.keyIs(K.timings, keyEnd) || this.keyIs(K.sglext, keyEnd)) {
      return this.mustBeNull(v);
    }
    return this.skip(v, 1);
  }

  private choiceList(i: number): number {
    i = this.ws(i);
    if (i < this.end && this.b[i] === RBRACKET) return i + 1;
    for (;;) {
      i = this.ws(i);
      if (i >= this.end || this.b[i] !== LBRACE || this.nChoices === MAX_CHOICES) this.decline();
      const ch = this.choices[this.nChoices++];
      ch.hasDelta = false;
      ch.content.start = ch.reasoningContent.start = ch.reasoning.start = ch.text.start = ch.finishReason.start = ch.ids.start = UNSEEN;
      this.ch = ch;
      this.sawDelta = false;
      i = this.ws(this.members(i + 1, CHOICE));
      seenOrAbsent(ch.content);
      seenOrAbsent(ch.reasoningContent);
      seenOrAbsent(ch.reasoning);
      seenOrAbsent(ch.text);
      seenOrAbsent(ch.finishReason);
      if (ch.ids.start === UNSEEN) ch.ids.start = -1;
      if (!this.more(i, RBRACKET)) return i + 1;
      i++;
    }
  }

  private choiceMember(keyEnd: number, v: number): number {
    const ch = this.ch;
    if (this.keyIs(K.delta, keyEnd)) {
      if (this.sawDelta) this.decline();
      this.sawDelta = true;
      if (this.isNull(v)) return v + 4;
      if (this.b[v] !== LBRACE) this.decline();
      ch.hasDelta = true;
      return this.members(v + 1, DELTA);
    }
    if (this.keyIs(K.text, keyEnd)) return this.stringOrSkip(v, ch.text);
    if (this.keyIs(K.finish_reason, keyEnd)) return this.stringOrSkip(v, ch.finishReason);
    if (this.keyIs(K.token_ids, keyEnd)) return this.idList(v, ch.ids);
    if (this.keyIs(K.logprobs, keyEnd) || this.keyIs(K.sglext, keyEnd)) return this.mustBeNull(v);
    return this.skip(v, 2);
  }

  /**
   * `token_ids`: null, or a list of integers without sign, fraction or exponent and of at most 15
   * digits (each exactly the number JSON.parse gives); anything else is declined.
   */
  private idList(v: number, ids: IdsSpan): number {
    if (ids.start !== UNSEEN) this.decline();
    ids.start = -1;
    if (this.isNull(v)) return v + 4;
    if (this.b[v] !== LBRACKET) this.decline();
    const b = this.b, end = this.end;
    let i = this.ws(v + 1);
    if (i < end && b[i] === RBRACKET) return i + 1; // empty: no ids, as with null
    for (;;) {
      const from = i;
      if (i < end && b[i] === ZERO) i++;
      else while (i < end && b[i] >= ZERO && b[i] <= NINE) i++;
      if (i === from || i - from > 15) this.decline();
      i = this.ws(i);
      if (!this.more(i, RBRACKET)) break;
      i = this.ws(i + 1);
    }
    ids.start = v + 1;
    ids.end = i;
    return i + 1;
  }

  private deltaMember(keyEnd: number, v: number): number {
    const ch = this.ch;
    if (this.keyIs(K.content, keyEnd)) return this.stringOrSkip(v, ch.content);
    if (this.keyIs(K.reasoning_content, keyEnd)) return this.stringOrSkip(v, ch.reasoningContent);
    if (this.keyIs(K.reasoning, keyEnd)) return this.stringOrSkip(v, ch.reasoning);
    if (this.keyIs(K.function_call, keyEnd)) return this.mustBeNull(v);
    if (this.keyIs(K.tool_calls, keyEnd)) {
      if (this.isNull(v)) return v + 4;
      // An empty list carries no call; anything else is for the general path.
      if (this.b[v] !== LBRACKET) this.decline();
      const close = this.ws(v + 1);
      if (close >= this.end || this.b[close] !== RBRACKET) this.decline();
      return close + 1;
    }
    return this.skip(v, 3);
  }
}

/** A span the choice did not have is absent (-1). */
function seenOrAbsent(s: StringSpan): void {
  if (s.start === UNSEEN) s.start = -1;
}

/** Where an object's members are read: the event, a choice, a delta. */
const TOP = 0, CHOICE = 1, DELTA = 2;
/** A span not met yet in the current choice (a second one is declined). */
const UNSEEN = -2;
/** One reader for every stream: it holds nothing between events (the loop is single-threaded). */
export const chunkScan = new ChunkScan();

/** The bytes `[DONE]`. */
const DONE_BYTES = [91, 68, 79, 78, 69, 93];
/** Decodes a string field's bytes; a BOM inside the stream is a character, as the stream's decoder keeps it. */
const fieldDecoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** A string field of an event read as bytes, as JSON.parse would give it. */
export function fieldText(b: Uint8Array, s: StringSpan): string {
  return s.escaped ? JSON.parse(fieldDecoder.decode(b.subarray(s.start - 1, s.end + 1))) : fieldDecoder.decode(b.subarray(s.start, s.end));
}

/** Appends a string field to `parts`: ASCII without an escape straight from the bytes, anything else as JSON.parse gives it. */
export function appendField(parts: TextParts, b: Uint8Array, s: StringSpan): void {
  if (!s.escaped && parts.appendAscii(b, s.start, s.end)) return;
  parts.append(fieldText(b, s));
}

/** The span holds a non-empty string. */
export function nonEmpty(s: StringSpan): boolean {
  return s.start >= 0 && s.end > s.start;
}

/** The event's data is exactly `[DONE]`. */
export function isDone(b: Uint8Array, start: number, end: number): boolean {
  if (end - start !== DONE_BYTES.length) return false;
  for (let k = 0; k < DONE_BYTES.length; k++) if (b[start + k] !== DONE_BYTES[k]) return false;
  return true;
}

/** `[DONE]` occurs somewhere in the event's data. */
export function holdsDone(b: Uint8Array, start: number, end: number): boolean {
  for (let i = b.indexOf(DONE_BYTES[0], start); i !== -1 && i + DONE_BYTES.length <= end; i = b.indexOf(DONE_BYTES[0], i + 1)) {
    if (isDone(b, i, i + DONE_BYTES.length)) return true;
  }
  return false;
}

/** Pushes the ids of a list the reader checked (integers of at most 15 digits, commas, whitespace) into `to`; returns how many. */
export function pushIds(b: Uint8Array, start: number, end: number, to: { push(id: number): void }): number {
  let n = 0, v = 0, inNum = false;
  for (let i = start; i < end; i++) {
    const c = b[i];
    if (c >= 48 && c <= 57) {
      v = v * 10 + (c - 48);
      inNum = true;
    } else if (inNum) {
      to.push(v);
      n++;
      v = 0;
      inNum = false;
    }
  }
  if (inNum) {
    to.push(v);
    n++;
  }
  return n;
}
