/**
 * A2A-Version as D5 reads it, including a value several header lines (or
 * gRPC metadata entries) made into a comma-joined list.
 */
import { negotiateVersion } from "../../runtime/a2a/service-params.js";

const policy = { supported: ["1.0"] };

test("the same version sent twice is that version; patch numbers never count", () => {
  expect(negotiateVersion("1.0, 1.0", null, policy)).toEqual({ ok: true, version: "1.0" });
  expect(negotiateVersion("1.0,1.0.1", null, policy)).toEqual({ ok: true, version: "1.0" });
  // Empty list elements are ignored (RFC 9110 5.6.1).
  expect(negotiateVersion("1.0,", null, policy)).toEqual({ ok: true, version: "1.0" });
  expect(negotiateVersion("1.0, , 1.0", null, policy)).toEqual({ ok: true, version: "1.0" });
});

test("two different versions are refused, saying to send one", () => {
  expect(negotiateVersion("1.0, 0.3", null, policy)).toEqual({ ok: false, requested: "1.0, 0.3", message: "A2A-Version names several versions (1.0, 0.3); send one of 1.0, once" });
  expect(negotiateVersion("1.0, x", null, policy)).toMatchObject({ ok: false, requested: "1.0, x" });
});

test("one unsupported version is refused as before", () => {
  expect(negotiateVersion("2.0", null, policy)).toEqual({ ok: false, requested: "2.0", message: "Protocol version 2.0 is not supported. Supported: 1.0. Send A2A-Version: 1.0 with each request" });
});

test("the version a refusal asks for is the newest served, wherever it stands in the list (0.3 comes last with compat on)", () => {
  const withCompat = { supported: ["1.0", "0.3"] };
  expect(negotiateVersion("1.5", null, withCompat)).toMatchObject({ ok: false, message: "Protocol version 1.5 is not supported. Supported: 1.0, 0.3. Send A2A-Version: 1.0 with each request" });
  expect(negotiateVersion(null, null, { supported: ["1.1", "1.0", "0.3"], acceptMissing: true })).toEqual({ ok: true, version: "1.1" });
  expect(negotiateVersion("2.0", null, { supported: ["1.10", "1.9"] })).toMatchObject({ message: expect.stringContaining("Send A2A-Version: 1.10 ") });
});

test("a refusal repeats at most 64 characters of the version sent (an 8 KB value came back three times over)", () => {
  const sent = `1.${"9".repeat(8000)}`;
  const result = negotiateVersion(sent, null, policy);
  expect(result).toMatchObject({ ok: false, requested: sent });
  if (result.ok) return;
  expect(result.message).toBe(`Protocol version ${sent.slice(0, 64)}… is not supported. Supported: 1.0. Send A2A-Version: 1.0 with each request`);
  expect(negotiateVersion(`${sent}, 0.3`, null, policy)).toMatchObject({ message: expect.stringMatching(/^A2A-Version names several versions \(1\.9{62}…\)/) });
});
