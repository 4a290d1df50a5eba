/** --base-url normalisation: with or without /v1 and trailing slashes; bad URLs are usage errors (64). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import { apiUrl, isLoopback, parseEndpoint, rootUrl, v1Url } from "../../lib/client/mod.ts";

test("the same server however the root is written", () => {
  for (
    const raw of [
      "http://127.0.0.1:8000",
      "http://127.0.0.1:8000/",
      "http://127.0.0.1:8000/v1",
      "http://127.0.0.1:8000/v1/",
      " http://127.0.0.1:8000//v1// ",
    ]
  ) {
    const ep = parseEndpoint(raw);
    assert.equal(ep.baseUrl, "http://127.0.0.1:8000/v1", raw);
    assert.equal(ep.prefix, "", raw);
    assert.equal(apiUrl(ep, "chat"), "http://127.0.0.1:8000/v1/chat/completions");
    assert.equal(apiUrl(ep, "completions"), "http://127.0.0.1:8000/v1/completions");
    assert.equal(v1Url(ep, "/models"), "http://127.0.0.1:8000/v1/models");
    assert.equal(rootUrl(ep, "/health"), "http://127.0.0.1:8000/health");
  }
});

test("default ports, https, path prefixes, case and IPv6", () => {
  const a = parseEndpoint("https://Example.COM/proxy/v1/");
  assert.equal(a.port, 443);
  assert.equal(a.prefix, "/proxy");
  assert.equal(a.baseUrl, "https://example.com:443/proxy/v1");
  assert.equal(a.canonical, "https://example.com:443/proxy");
  assert.equal(rootUrl(a, "metrics"), "https://example.com:443/proxy/metrics");
  assert.equal(parseEndpoint("http://h").port, 80);
  assert.equal(parseEndpoint("http://h/api").baseUrl, "http://h:80/api/v1");
  const v6 = parseEndpoint("http://[::1]:8000/v1");
  assert.equal(v6.baseUrl, "http://[::1]:8000/v1");
  assert.equal(isLoopback(v6), true);
  assert.equal(isLoopback(parseEndpoint("http://localhost:1")), true);
  assert.equal(isLoopback(parseEndpoint("http://10.0.0.1:1")), false);
});

test("bad URLs are usage errors naming the flag", () => {
  for (
    const raw of [
      "127.0.0.1:8000",
      "localhost",
      "ftp://h/",
      "http://",
      "http://u:p@h:1",
      "http://h:1/v1?x=1",
      "http://h:1/#a",
      "http://h:99999",
      "",
    ]
  ) {
    let caught: unknown = null;
    try {
      parseEndpoint(raw);
    } catch (e) {
      caught = e;
    }
    assert.ok(caught instanceof IkError, `'${raw}' must be rejected`);
    assert.equal(caught.code, 64, raw);
    assert.match(caught.oneLine(), /^ik: --base-url: /, raw);
  }
});
