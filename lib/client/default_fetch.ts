/**
 * The fetch the streaming loop uses when its caller injects none. The CLI sets it once at start to
 * the runtime's HTTP client for measured requests (on Node a `node:http` one, which does not add
 * Node's fetch overhead to every TTFT); library users and tests get the global fetch.
 * @module
 */
import type { BodySink } from "../h1/types.ts";

/**
 * The fetch signature the client calls. An implementation may call `init.onSend` when it hands the
 * request to its connection (the send time is taken again then), with `true` when that connection
 * is a reused pooled one (only then is a request the server closed unanswered sent again); may take
 * a connection of its own when `init.newConnection`; and may hand the body to `init.bodySink`
 * instead of the Response's stream when the sink accepts it (ik's HTTP/1.1 client does all three);
 * others ignore them.
 */
export type ClientFetch = (
  input: string,
  init: RequestInit & { onSend?: (reused?: boolean) => void; newConnection?: boolean; bodySink?: BodySink },
) => Promise<Response>;

let current: ClientFetch | null = null;

/** Sets the default fetch of {@link streamCompletion} (null: the global fetch again). */
export function setDefaultFetch(f: ClientFetch | null): void {
  current = f;
}

/** The default fetch of the streaming loop. */
export function defaultFetch(): ClientFetch {
  return current ?? ((input, init) => fetch(input, init));
}
