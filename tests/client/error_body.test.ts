/** Error bodies of every personality reduce to their message (flat, wrapped, string, detail, text). */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { errorInfoFromJson, formatHttpError, parseErrorBody } from "../../lib/client/mod.ts";
import { ENGINES_DIR } from "./_replay.ts";

test("every error-*.json fixture yields its own message, type and code", () => {
  let n = 0;
  for (const engine of readdirSync(ENGINES_DIR, { withFileTypes: true })) {
    if (!engine.isDirectory()) continue;
    for (
      const f of readdirSync(join(ENGINES_DIR, engine.name)).filter((x) =>
        x.startsWith("error-") && x.endsWith(".json")
      )
    ) {
      const text = readFileSync(join(ENGINES_DIR, engine.name, f), "utf8");
      const obj = JSON.parse(text);
      const inner = typeof obj.error === "object" && obj.error !== null ? obj.error : obj;
      const wantMsg = (typeof obj.error === "string" ? obj.error : inner.message).replace(/\s+/g, " ").trim();
      const info = parseErrorBody(text, 400);
      assert.equal(info.message, wantMsg.length > 300 ? info.message : wantMsg, `${engine.name}/${f}`);
      assert.equal(
        info.type,
        typeof obj.error === "string" ? null : inner.type ?? null,
        `${engine.name}/${f}`,
      );
      if (typeof obj.error !== "string") assert.equal(info.code, inner.code ?? null, `${engine.name}/${f}`);
      n++;
    }
  }
  assert.ok(n >= 20, `checked ${n} fixtures`);
});

test("other shapes: FastAPI detail (string and list), bare string, plain text, empty, long", () => {
  assert.equal(parseErrorBody('{"detail":"Not Found"}').message, "Not Found");
  assert.equal(
    parseErrorBody('{"detail":[{"loc":["body"],"msg":"field required"},{"msg":"bad"}]}').message,
    "field required; bad",
  );
  assert.equal(parseErrorBody('"overloaded"').message, "overloaded");
  assert.equal(
    parseErrorBody("upstream connect error\nor disconnect").message,
    "upstream connect error or disconnect",
  );
  assert.equal(parseErrorBody("", 502).message, "HTTP 502 with an empty body");
  assert.equal(parseErrorBody("{not json").message, "{not json");
  assert.equal(parseErrorBody("x".repeat(1000)).message.length, 300);
  assert.equal(errorInfoFromJson({ foo: 1 }), null);
  assert.equal(errorInfoFromJson([1]), null);
});

test("formatHttpError adds the type unless the message already says it", () => {
  assert.equal(
    formatHttpError(404, { message: "The model x does not exist.", type: "NotFoundError", code: 404 }),
    "HTTP 404: The model x does not exist. (NotFoundError)",
  );
  assert.equal(
    formatHttpError(401, { message: "Unauthorized", type: null, code: null }),
    "HTTP 401: Unauthorized",
  );
});
