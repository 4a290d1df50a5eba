/**
 * What makes a load run one shard of a group (the shard, the shared timetable's start and gap,
 * the group id): the type both the sharded runner and its slice record read, in its own file so
 * neither imports the other for it.
 * @module
 */
import type { ShardSpec } from "./shard_spec.ts";

/** What makes a load run one shard of a group. */
export interface ShardRun {
  spec: ShardSpec;
  /** Wall-clock start of the first level, ms since the epoch. */
  startAtMs: number;
  levelGapS: number;
  groupId: string;
  /** Where the group id came from (`--group`, `slurm`, `kubernetes`, `start-at`). */
  groupSource: string;
}
