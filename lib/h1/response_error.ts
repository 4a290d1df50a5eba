/**
 * The error of a response ik's HTTP/1.1 client cannot read.
 * @module
 */

/** A response the parser cannot read: malformed, or cut short by the connection's close. */
export class H1ProtocolError extends Error {
  /** An OS-style code, so callers classify it as fetch's errors are: ECONNRESET for a cut-short body. */
  readonly code: string;
  constructor(message: string, code = "ERR_HTTP_PARSE") {
    super(message);
    this.name = "H1ProtocolError";
    this.code = code;
  }
}
