// Parent for the orphan-watchdog tests. Mode "hang" (default): spawns, through runtime.spawn,
//   a group that obeys SIGTERM, a group that ignores it, and a child in this process's own group,
//   prints "ready term=<pgid> ignore=<pgid> same=<pid>", then waits to be SIGKILLed.
// Mode "natural": spawns a group whose leader exits at once but leaves a sleeping member, waits
//   for the leader, prints "ready group=<pgid>" and returns from main with the member still alive.
// argv[1] is a unique marker that every spawned shell carries as its $0.
import { runtime } from "../../../lib/runtime/mod.ts";

const [mode = "hang", marker = "ik-orphan-test"] = runtime.args();
if (mode === "natural") {
  const g = runtime.spawn(["sh", "-c", "sleep 30 & exit 0", `${marker}-natural`]);
  await g.exited;
  runtime.writeStdout(`ready group=${g.pid}\n`);
} else {
  const term = runtime.spawn(["sh", "-c", "sleep 300 & wait", `${marker}-term`]);
  const ignore = runtime.spawn(["sh", "-c", "trap '' TERM; sleep 300 & wait", `${marker}-ignore`]);
  const same = runtime.spawn(["sleep", "300"], { newGroup: false });
  await new Promise((r) => setTimeout(r, 300)); // the shells have started their sleeps
  runtime.writeStdout(`ready term=${term.pid} ignore=${ignore.pid} same=${same.pid}\n`);
  setTimeout(() => runtime.exit(9), 60_000);
}
