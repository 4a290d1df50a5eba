/**
 * The HTTP clients ik measures with, for the socket-level tests to run through each: the global
 * fetch (Bun's serves https there; Deno's is its runtime client), ik's HTTP/1.1 client (on Bun over
 * Bun.connect, as the binary measures; on Deno over node:net), and the Node build's node:http client.
 */
import { runtime } from "../../lib/runtime/mod.ts";
import { nodeFetch } from "../../lib/runtime/_node_fetch.ts";
import { h1Fetch, netConnect } from "../../lib/h1/mod.ts";

/** A client under test: its name and the fetch to inject (undefined: the global fetch). */
export type ClientCase = [string, ((u: string, i: RequestInit) => Promise<Response>) | undefined];

/**
 * Every client, by name, each once: ik's HTTP/1.1 client over the runtime's own transport where the
 * runtime's measured client is it (Bun), else over node:net (Deno), whose runtime client is its fetch.
 */
export const CLIENTS: ClientCase[] = [
  ["global fetch", undefined],
  typeof (runtime.fetch as { closeIdle?: unknown }).closeIdle === "function"
    ? [`h1 client (the runtime's, ${runtime.name})`, runtime.fetch]
    : ["h1 client (node:net)", h1Fetch(netConnect, (u, i) => fetch(u, i))],
  ["node:http client", nodeFetch((u, i) => fetch(u, i))],
];
