/**
 * Entry point of the Node build (the single executable for aarch64 hosts with 64 KB pages, where
 * Bun aborts). cli.ts runs itself under `import.meta.main`; inside a bundle cli.ts is not the main
 * module, so Bun's bundler drops that block and this file calls main() instead. Nothing else differs:
 * the runtime shim picks its Node implementation (lib/runtime/node.ts) at startup.
 * @module
 */
import { main, reportError } from "../cli.ts";
import { runtime } from "../lib/runtime/mod.ts";

main(runtime.args()).catch(reportError).then((code) => runtime.exit(code));
