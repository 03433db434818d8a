/**
 * A requested extension URI that is not printable ASCII (UTF-8 bytes, read by node as latin1) is
 * left out of `requestedExtensions`, the others kept: a URI is ASCII (RFC 3986 §2), and the
 * handler saw mojibake ("urn:act:cafÃ©") where gRPC drops the metadata entry.
 *
 * An activated extension URI that a header cannot carry (not printable ASCII: a character past
 * U+007E, CR/LF, NUL) is left out of `A2A-Extensions` on every binding, and the answer goes out:
 * node refused the whole header after the handler had run, so the JSON bindings answered an empty
 * 500, while gRPC, which left the value out, answered (security hunt).
 */
import { request as httpRequest } from "node:http";
import type { AgentServer } from "protoc-gen-a2a/runtime/server";
import { createA2AServiceGrpcClient } from "../../generated/a2a_grpc.js";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import { serveA2AService } from "../../generated/a2a_server.js";

const handler: Partial<A2AServiceHandler> = {
  async getTask(request, context) {
    requested.push([...context.requestedExtensions]);
    // The URIs to activate come in the id, split at "|": a handler echoing what a client sent.
    for (const uri of request.id.split("|")) context.activatedExtensions.add(uri);
    return { id: "t", contextId: "c", status: { state: 1 } } as never;
  },
};
const requested: string[][] = [];
const card = { name: "Ext", description: "d", version: "1", capabilities: {}, defaultInputModes: ["text/plain"], defaultOutputModes: ["text/plain"], skills: [] };

let server: AgentServer;
const failures: unknown[] = [];
beforeAll(async () => {
  server = await serveA2AService(handler as A2AServiceHandler, card, { port: 0, grpcPort: 0, onError: (err) => void failures.push(err) });
});
afterAll(() => server.close());

const cases = [
  ["a character past U+007E", "urn:example:\u4e2d"],
  ["CR/LF", "urn:a\r\nset-cookie: x=1"],
  ["NUL", "urn:a\u0000b"],
] as const;

describe.each(cases)("%s", (_, odd) => {
  const id = `urn:example:kept|${odd}`;

  test("JSON-RPC and HTTP+JSON answer, A2A-Extensions naming the URI a header can carry", async () => {
    const rpc = await fetch(server.jsonRpcUrl!, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id } }),
    });
    expect(rpc.status).toBe(200);
    expect(((await rpc.json()) as { result?: { id?: string } }).result?.id).toBe("t");
    expect(rpc.headers.get("a2a-extensions")).toBe("urn:example:kept");
    const rest = await fetch(`${server.httpJsonUrl}/tasks/${encodeURIComponent(id)}`, { headers: { "a2a-version": "1.0" } });
    expect(rest.status).toBe(200);
    expect(((await rest.json()) as { id?: string }).id).toBe("t");
    expect(rest.headers.get("a2a-extensions")).toBe("urn:example:kept");
    expect(failures).toEqual([]);
  });

  test("gRPC answers too", async () => {
    const client = createA2AServiceGrpcClient(server.grpcAddress!);
    try {
      expect((await client.getTask({ id })).id).toBe("t");
    } finally {
      client.close();
    }
  });
});

describe("a requested URI that is not printable ASCII", () => {
  /** Sends the header's UTF-8 bytes as they are: node:http writes headers flushed alone as latin1. */
  const send = (url: string, method: string, body: string) =>
    new Promise<number>((resolve, reject) => {
      const value = Buffer.from("urn:act:caf\u00e9, urn:act:plain,urn:act:\u4e2d").toString("latin1");
      const req = httpRequest(new URL(url), { method, headers: { "content-type": "application/json", "a2a-version": "1.0", "a2a-extensions": value } }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      });
      req.on("error", reject);
      req.flushHeaders();
      req.end(body);
    });

  test("is left out of requestedExtensions on JSON-RPC and HTTP+JSON, the others kept", async () => {
    requested.length = 0;
    expect(await send(server.jsonRpcUrl!, "POST", JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "t" } }))).toBe(200);
    expect(await send(`${server.httpJsonUrl}/tasks/t`, "GET", "")).toBe(200);
    expect(requested).toEqual([["urn:act:plain"], ["urn:act:plain"]]);
    expect(failures).toEqual([]);
  });
});

// Since such a URI is left out of requestedExtensions, a card requiring one refused every call as
// not listing it (ExtensionSupportRequired, "list it in A2A-Extensions"), though the client had.
test("a card requiring an extension whose URI is not printable ASCII is refused when served, naming it", async () => {
  const uri = "urn:act:caf\u00e9";
  const requiring = { ...card, capabilities: { extensions: [{ uri: "urn:act:plain", required: true }, { uri, required: true }] } };
  await expect(serveA2AService(handler as A2AServiceHandler, requiring, { port: 0 })).rejects.toThrow(`the card requires the extension "${uri}", which no client can list in A2A-Extensions`);
  // Optional, it is served: a client that does not use it loses nothing.
  const optional = await serveA2AService(handler as A2AServiceHandler, { ...card, capabilities: { extensions: [{ uri }] } }, { port: 0 });
  await optional.close();
});
