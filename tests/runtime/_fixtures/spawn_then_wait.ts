// Spawns a process group (bash + a grandchild sleep), prints the pids, then either waits for a
// signal (mode "signal": exits 130 through runtime.exit) or returns from main (mode "exit").
import { runtime } from "../../../lib/runtime/mod.ts";

const mode = runtime.args()[0] ?? "signal";
if (mode !== "exit") {
  for (const s of ["SIGINT", "SIGTERM", "SIGHUP"] as const) runtime.onSignal(s, () => runtime.exit(130));
}
const g = runtime.spawn(["bash", "-c", "sleep 300 & echo $! > /dev/null; wait"]);
await new Promise((r) => setTimeout(r, 100));
runtime.writeStdout(`group ${g.pid}\n`);
if (mode === "exit") {
  runtime.exit(0);
} else {
  setTimeout(() => runtime.exit(9), 20_000);
}
