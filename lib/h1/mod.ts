/**
 * ik's HTTP/1.1 client for measured requests: a fetch on a raw connection (fetch.ts), the request
 * on the wire (request_bytes.ts), the response parser (response_parser.ts, response_head.ts),
 * its keep-alive pool (pool.ts) and a `node:net` transport (net_transport.ts).
 * @module
 */
export { type H1Fetch, h1Fetch, type H1FetchFn } from "./fetch.ts";
export { framingOf, H1ProtocolError, keepsAlive, MAX_HEAD_BYTES, type ResponseHead, ResponseParser, type ResponseSink } from "./response_parser.ts";
export { netConnect } from "./net_transport.ts";
export type { BodyCancel, BodySink, Connect, TransportConn, TransportHandlers } from "./types.ts";
