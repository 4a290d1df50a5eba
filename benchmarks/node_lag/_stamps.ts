/**
 * Stage stamps for benchmarks/node_lag/stages.ts: imported first in an instrumented bundle, it wraps
 * Node's own http/net methods (never ik's code) and writes one JSON line per stamp on stderr:
 * the wall time (timeOrigin + now) of each stage a request passes. Investigation only.
 * @module
 */
import http from "node:http";
import net from "node:net";

const wall = () => performance.timeOrigin + performance.now();

/** Stamps taken in this process, in order (the client reads its own; a server prints them). */
export const stamps: { k: string; t: number }[] = [];
/** Print each stamp on stderr as it is taken (the instrumented server). */
export const stampIo = { print: false };
const out = (o: { k: string; t: number }) => {
  stamps.push(o);
  if (stampIo.print) process.stderr.write(`STAMP ${JSON.stringify(o)}\n`);
};

// Server: the head parsed ('request' event), the body read ('end').
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (this: http.Server, ev: string, ...a: unknown[]) {
  if (ev === "request") {
    const req = a[0] as http.IncomingMessage;
    const t = wall();
    out({ k: "srv_head", t });
    req.once("end", () => out({ k: "srv_body", t: wall() }));
  }
  return emit.call(this, ev, ...a);
} as typeof emit;
// Client: the request's bytes handed to the socket, and each read of the response body.
const sockWrite = net.Socket.prototype.write;
net.Socket.prototype.write = function (this: net.Socket, chunk: unknown, ...a: unknown[]) {
  const s = typeof chunk === "string" ? chunk : "";
  if (s.startsWith("POST ")) out({ k: "cli_write", t: wall() });
  return (sockWrite as (...x: unknown[]) => boolean).call(this, chunk, ...a);
} as typeof sockWrite;
const push = http.IncomingMessage.prototype.push;
http.IncomingMessage.prototype.push = function (this: http.IncomingMessage, chunk: unknown, ...a: unknown[]) {
  // Only a client's response has .req; a server's request body (which holds "content" too) has not.
  if (chunk instanceof Uint8Array && (this as { req?: unknown }).req !== undefined) {
    const s = new TextDecoder().decode(chunk);
    if (/"content":"[^"]/.test(s) || /"text":"[^"]/.test(s)) out({ k: "cli_token_read", t: wall() });
  }
  return (push as (...x: unknown[]) => boolean).call(this, chunk, ...a);
} as typeof push;

// Both: when bytes really go to the kernel (the socket's own write, after any cork).
type Gen = (this: net.Socket, writev: boolean, data: unknown, ...a: unknown[]) => unknown;
const proto = net.Socket.prototype as unknown as { _writeGeneric: Gen };
const gen = proto._writeGeneric;
proto._writeGeneric = function (writev, data, ...a) {
  const parts = writev ? (data as { chunk: unknown }[]).map((d) => d.chunk) : [data];
  const text = parts.map((c) => (typeof c === "string" ? c : c instanceof Uint8Array ? new TextDecoder().decode(c) : "")).join("");
  if (stampIo.print && (/"content":"[^"]/.test(text) || /"text":"[^"]/.test(text))) out({ k: "srv_token_kernel", t: wall() });
  return gen.call(this, writev, data, ...a);
};
