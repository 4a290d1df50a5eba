/**
 * The orphan watchdog: a tiny `sh` loop started next to every spawned child, which kills the
 * child's process group once ik is gone, however ik died.
 *
 * Why a separate process: ik's own cleanup (kill every group on exit and on SIGINT/SIGTERM/SIGHUP,
 * in _process.ts) cannot run when ik is SIGKILLed or OOM-killed, and each child leads its own
 * session, so nothing else reaches it: `kill -9` of `ik selftest` used to leave its `ik mock`
 * children running forever. Linux's PR_SET_PDEATHSIG is not reachable from JS and fires on the
 * death of the spawning *thread* (runtimes spawn from worker threads), and only for the direct
 * child, not its group; a pipe whose EOF signals ik's death would have to stay open and unref'd
 * in ik on three runtimes' stream implementations. Polling from `sh` is portable and plain.
 *
 * Why it looks where it looks:
 * - It runs in a session of its own (setsid via `detached`), so it is neither in ik's group
 *   (a Ctrl-C or a group kill aimed at ik must not take the watchdog before it can act) nor in
 *   the child's (killing the child's group must not take the watchdog with it).
 * - "ik is gone" is "my parent is no longer ik" (`/proc/$$/stat`): the kernel reparents the
 *   watchdog the moment ik exits, before anyone reaps ik, so a zombie ik that its own parent never
 *   waits for still counts as dead, and a recycled pid cannot pass for ik. Without /proc (macOS)
 *   it falls back to `kill -0 <ik pid>`.
 * - It also ends by itself as soon as the child's group is gone (no member left, zombies included),
 *   so there is one watchdog per live group and none outlives its group by more than one poll.
 * - It inherits no pipe of ik's (all three stdio are /dev/null) and is unref'd, so it neither
 *   keeps ik's event loop alive nor delays EOF on ik's stdout/stderr for whoever reads them.
 *
 * Timing: polls every {@link POLL_S} s; on ik's death it sends SIGTERM to the group, waits up to
 * {@link GRACE_S} s for it to go (checking every 0.1 s), then SIGKILLs what is left: a group is
 * gone at most ~1.2 s after ik, well inside the 2 s requirement. (A killed orphan stays a zombie
 * member of its group until init reaps it; where init reaps lazily the watchdog sits out its grace
 * before it ends.) Cost: one `sleep` exec per poll, ~0.6% of a core per live group, measured.
 * @module
 */
import { spawn as nodeSpawn } from "node:child_process";

/** Seconds between two looks at ik and the group. */
export const POLL_S = 0.2;

/** Seconds a group gets between SIGTERM and SIGKILL once ik is gone. */
export const GRACE_S = 1;

/** The watchdog's `$0`: its command line reads `sh -c <script> ik-watchdog <ik pid> <target>`. */
export const WATCHDOG_NAME = "ik-watchdog";

// $1: ik's pid; $2: what to watch and kill, "-<pgid>" for a group or "<pid>" for one process.
// dash's kill takes neither `--` nor `-s 0`; `kill -0 -123` and `kill -TERM -123` work in dash
// and bash alike.
const SCRIPT = `ik=$1; t=$2
ik_alive() {
  if [ -r /proc/$$/stat ]; then
    read -r s < /proc/$$/stat || return 1
    s=\${s##*") "}
    set -- $s
    [ "$2" = "$ik" ]
  else
    kill -0 "$ik" 2>/dev/null
  fi
}
while kill -0 "$t" 2>/dev/null; do
  if ! ik_alive; then
    kill -TERM "$t" 2>/dev/null
    i=0
    while [ "$i" -lt ${
  Math.round(GRACE_S * 10)
} ] && kill -0 "$t" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
    kill -KILL "$t" 2>/dev/null
    exit 0
  fi
  sleep ${POLL_S}
done`;

/**
 * Starts the watchdog for a child ik just spawned; failures to start it are ignored (the child
 * then only has ik's own exit and signal cleanup, as before).
 * @param ikPid ik's own pid (the watchdog's parent)
 * @param childPid the spawned child's pid
 * @param ownGroup whether the child leads its own group (then the whole group is watched and killed)
 * @param own the set of ik's own children, which the watchdog joins while it runs
 * @returns the watchdog's pid, or -1 when it could not be started
 */
export function startWatchdog(ikPid: number, childPid: number, ownGroup: boolean, own?: Set<number>): number {
  if (!(childPid > 0) || !(ikPid > 0)) return -1;
  try {
    const wd = nodeSpawn("sh", [
      "-c",
      SCRIPT,
      WATCHDOG_NAME,
      String(ikPid),
      ownGroup ? `-${childPid}` : String(childPid),
    ], {
      detached: true,
      stdio: "ignore",
    });
    wd.on("error", () => {/* no sh: nothing more we can do */});
    // ik's own child, so a subreaper ik never takes it for an engine's adopted orphan.
    const wpid = wd.pid ?? -1;
    if (own && wpid > 0) {
      own.add(wpid);
      wd.once("exit", () => own.delete(wpid));
    }
    wd.unref();
    return wd.pid ?? -1;
  } catch {
    return -1;
  }
}
