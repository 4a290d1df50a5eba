/**
 * The HTTP clients ik measures with, for the socket-level tests to run through each: the global
 * fetch, the runtime's measured-request client (on Bun ik's HTTP/1.1 client over Bun.connect),
 * ik's HTTP/1.1 client over node:net (every runtime), and the Node build's node:http client.
 */
import { runtime } from "../../lib/runtime/mod.ts";
import { nodeFetch } from "../../lib/runtime/_node_fetch.ts";
import { h1Fetch, netConnect } from "../../lib/h1/mod.ts";

/** A client under test: its name and the fetch to inject (undefined: the global fetch). */
export type ClientCase = [string, ((u: string, i: RequestInit) => Promise<Response>) | undefined];

/** Every client, by name. */
export const CLIENTS: ClientCase[] = [
  ["global fetch", undefined],
  [`runtime client (${runtime.name})`, runtime.fetch],
  ["h1 client (node:net)", h1Fetch(netConnect, (u, i) => fetch(u, i))],
  ["node:http client", nodeFetch((u, i) => fetch(u, i))],
];
