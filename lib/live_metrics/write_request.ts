/**
 * The body of a Prometheus remote write 1.0 request: a `prometheus.WriteRequest` protobuf, snappy
 * block-compressed. Protobuf bytes are written with `@bufbuild/protobuf`'s wire writer (no code
 * generation: the four messages are tiny), snappy by `snappyjs`; both pure JavaScript, so they run
 * the same on Bun, Deno and Node.
 *
 * ```proto
 * message WriteRequest { repeated TimeSeries timeseries = 1; }           // field 3 (metadata) unused
 * message TimeSeries   { repeated Label labels = 1; repeated Sample samples = 2; }
 * message Label        { string name = 1; string value = 2; }
 * message Sample       { double value = 1; int64 timestamp = 2; }        // timestamp: ms since epoch
 * ```
 * Labels must be sorted by name with `__name__` among them: a {@link Snapshot}'s already are.
 * @module
 */
import { VERSION } from "../version.ts";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import snappy from "snappyjs";
import type { Label, Snapshot } from "./series.ts";

/** The headers every remote write 1.0 request carries (user headers, such as auth, are added). */
export const REMOTE_WRITE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "Content-Encoding": "snappy",
  "Content-Type": "application/x-protobuf",
  "X-Prometheus-Remote-Write-Version": "0.1.0",
  // Remote write 1.0: the sender MUST name itself and its version.
  "User-Agent": `ik/${VERSION}`,
});

/** Field numbers of the remote write 1.0 messages. */
const F = { timeseries: 1, labels: 1, samples: 2, name: 1, value: 2, sampleValue: 1, timestamp: 2 } as const;

/**
 * The encoded Label messages of a series, by its label array: a registry's series keep the same
 * frozen array for their whole life, so each push re-encodes only the samples.
 */
const labelBytes = new WeakMap<readonly Label[], Uint8Array>();

/** The repeated `labels` fields (tag, length, Label) of one TimeSeries, cached per label array. */
function encodedLabels(labels: readonly Label[]): Uint8Array {
  let b = labelBytes.get(labels);
  if (b === undefined) {
    const w = new BinaryWriter();
    for (const l of labels) {
      w.tag(F.labels, WireType.LengthDelimited).fork()
        .tag(F.name, WireType.LengthDelimited).string(l.name)
        .tag(F.value, WireType.LengthDelimited).string(l.value)
        .join();
    }
    b = w.finish();
    if (Object.isFrozen(labels)) labelBytes.set(labels, b); // a mutable array could change under the cache
  }
  return b;
}

/**
 * Prometheus's stale marker, the NaN with bit pattern 0x7ff0000000000002, as the 8 little-endian
 * bytes of a protobuf double: written as bytes, because a JavaScript engine may canonicalise a
 * NaN's payload when the number passes through a variable.
 */
export const STALE_NAN_BYTES: Readonly<Uint8Array> = new Uint8Array([2, 0, 0, 0, 0, 0, 0xf0, 0x7f]);

/**
 * The uncompressed `WriteRequest` protobuf of a snapshot: one TimeSeries per series, each with
 * its labels (in the snapshot's order: sorted by name) and one Sample at `snapshot.timestampMs`;
 * for the run's last snapshot (`last`), a second Sample 1 ms later holding the stale marker.
 */
export function encodeWriteRequest(snapshot: Snapshot): Uint8Array {
  const w = new BinaryWriter();
  const ts = Math.trunc(snapshot.timestampMs);
  for (const s of snapshot.series) {
    w.tag(F.timeseries, WireType.LengthDelimited).fork()
      .raw(encodedLabels(s.labels))
      .tag(F.samples, WireType.LengthDelimited).fork()
      .tag(F.sampleValue, WireType.Bit64).double(s.value)
      .tag(F.timestamp, WireType.Varint).int64(ts)
      .join();
    if (snapshot.last) {
      w.tag(F.samples, WireType.LengthDelimited).fork()
        .tag(F.sampleValue, WireType.Bit64).raw(STALE_NAN_BYTES as Uint8Array)
        .tag(F.timestamp, WireType.Varint).int64(ts + 1)
        .join();
    }
    w.join();
  }
  return w.finish();
}

/** Snappy block-format compression (what `Content-Encoding: snappy` means for remote write; not the framed format). */
export function snappyCompress(bytes: Uint8Array): Uint8Array {
  return snappy.compress(bytes) as Uint8Array;
}

/** Snappy block-format decompression (the inverse of {@link snappyCompress}; for tests and receivers). */
export function snappyUncompress(bytes: Uint8Array, maxLength?: number): Uint8Array {
  return snappy.uncompress(bytes, maxLength) as Uint8Array;
}

/** The remote write request body of a snapshot: {@link encodeWriteRequest}, then {@link snappyCompress}. */
export function encodeRemoteWriteBody(snapshot: Snapshot): Uint8Array {
  return snappyCompress(encodeWriteRequest(snapshot));
}
