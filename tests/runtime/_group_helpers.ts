export { ROOT, startArgv } from "../_helpers/ik.ts";
export { runtime } from "../../lib/runtime/mod.ts";
