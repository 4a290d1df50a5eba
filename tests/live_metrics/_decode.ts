/**
 * Decodes a remote write 1.0 `WriteRequest` back with `@bufbuild/protobuf`'s wire reader (the
 * library the encoder uses), independently of the encoder's code: field numbers and wire types are
 * checked as read, unknown fields are refused.
 */
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { snappyUncompress } from "../../lib/live_metrics/mod.ts";

/** One decoded TimeSeries. */
export interface DecodedSeries {
  labels: { name: string; value: string }[];
  samples: DecodedSample[];
}

function expectWire(got: WireType, want: WireType, where: string): void {
  if (got !== want) throw new Error(`${where}: wire type ${got}, expected ${want}`);
}

function decodeLabel(bytes: Uint8Array): { name: string; value: string } {
  const r = new BinaryReader(bytes);
  const out = { name: "", value: "" };
  while (r.pos < r.len) {
    const [f, w] = r.tag();
    expectWire(w, WireType.LengthDelimited, `Label.${f}`);
    if (f === 1) out.name = r.string();
    else if (f === 2) out.value = r.string();
    else throw new Error(`Label: unknown field ${f}`);
  }
  return out;
}

/** Prometheus's stale marker's bits (a NaN; JavaScript may not keep a NaN's payload, so compared as bits). */
export const STALE_NAN_BITS = 0x7ff0000000000002n;

/** One decoded Sample; `stale` only on Prometheus's stale marker. */
export interface DecodedSample {
  value: number;
  timestamp: number;
  stale?: true;
}

function decodeSample(bytes: Uint8Array): DecodedSample {
  const r = new BinaryReader(bytes);
  const out: DecodedSample = { value: 0, timestamp: 0 };
  while (r.pos < r.len) {
    const [f, w] = r.tag();
    if (f === 1) {
      expectWire(w, WireType.Bit64, "Sample.value");
      const at = r.pos;
      if (BigInt.asUintN(64, BigInt(r.fixed64())) === STALE_NAN_BITS) out.stale = true;
      out.value = new DataView(bytes.buffer, bytes.byteOffset + at, 8).getFloat64(0, true);
    } else if (f === 2) {
      expectWire(w, WireType.Varint, "Sample.timestamp");
      out.timestamp = Number(r.int64());
    } else throw new Error(`Sample: unknown field ${f}`);
  }
  return out;
}

/** The TimeSeries of an uncompressed WriteRequest. */
export function decodeWriteRequest(bytes: Uint8Array): DecodedSeries[] {
  const r = new BinaryReader(bytes);
  const out: DecodedSeries[] = [];
  while (r.pos < r.len) {
    const [f, w] = r.tag();
    if (f !== 1) throw new Error(`WriteRequest: unexpected field ${f}`);
    expectWire(w, WireType.LengthDelimited, "WriteRequest.timeseries");
    const ts = new BinaryReader(r.bytes());
    const s: DecodedSeries = { labels: [], samples: [] };
    while (ts.pos < ts.len) {
      const [g, v] = ts.tag();
      expectWire(v, WireType.LengthDelimited, `TimeSeries.${g}`);
      if (g === 1) s.labels.push(decodeLabel(ts.bytes()));
      else if (g === 2) s.samples.push(decodeSample(ts.bytes()));
      else throw new Error(`TimeSeries: unknown field ${g}`);
    }
    out.push(s);
  }
  return out;
}

/** A request body (snappy, then protobuf) decoded. */
export function decodeRemoteWriteBody(body: Uint8Array): DecodedSeries[] {
  return decodeWriteRequest(snappyUncompress(body));
}
