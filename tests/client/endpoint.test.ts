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

test("error messages show the URL redacted: userinfo, secret query values, unparseable URLs", () => {
  const cases: [string, RegExp][] = [
    ["htp://user:pass@host/v1", /'htp:\/\/\*\*\*@host\/v1' is not an http/],
    ["http://user:pass@h:99999/v1", /'http:\/\/\*\*\*@h:99999\/v1' is not a valid URL/],
    ["http://h:1/v1?api_key=sk-live-123&x=1", /'http:\/\/h:1\/v1\?api_key=\*\*\*&x=1' has a query/],
    ["user:pass@h:8000", /'\*\*\*@h:8000' is not an http/],
  ];
  for (const [raw, want] of cases) {
    let line = "";
    try {
      parseEndpoint(raw);
    } catch (e) {
      assert.ok(e instanceof IkError, raw);
      line = e.oneLine();
    }
    assert.match(line, want, raw);
    for (const secret of ["user", "pass", "sk-live-123"]) assert.ok(!line.includes(secret), `${raw}: ${line}`);
  }
});

test("a base URL that names the route is the server root, with a note; plain roots carry no note", () => {
  const cases: [string, string, string, string][] = [
    ["http://h:8000/v1/chat/completions", "http://h:8000/v1", "", "/v1/chat/completions"],
    ["http://h:8000/v1/chat/completions/", "http://h:8000/v1", "", "/v1/chat/completions"],
    ["http://h:8000/v1/completions", "http://h:8000/v1", "", "/v1/completions"],
    ["https://h/proxy/v1/completions/", "https://h:443/proxy/v1", "/proxy", "/v1/completions"],
  ];
  for (const [raw, base, prefix, route] of cases) {
    const ep = parseEndpoint(raw);
    assert.equal(ep.baseUrl, base, raw);
    assert.equal(ep.prefix, prefix, raw);
    assert.equal(apiUrl(ep, "chat"), `${base}/chat/completions`, raw);
    assert.equal(ep.note, `--base-url ends in ${route}: using ${base.slice(0, -3)} as the server root`, raw);
  }
  assert.equal(parseEndpoint("http://h:8000/v1/chat/completions", "--url").note?.startsWith("--url ends in"), true);
  for (const raw of ["http://h:8000", "http://h:8000/v1/", "http://h:8000/completions-proxy"]) {
    assert.equal(parseEndpoint(raw).note, undefined, raw);
  }
});
