/**
 * A JWKS on loopback for the signing tests: every request answers `keys()` as a JWK set, and is
 * told to `seen` by its path first.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { JWK } from "jose";

export interface JwksServer {
  /** `http://127.0.0.1:<port>`. */
  readonly base: string;
  close(): Promise<void>;
}

export async function serveJwks(keys: () => readonly JWK[], seen: (path: string) => void = () => undefined): Promise<JwksServer> {
  const server = createServer((req, res) => {
    seen(req.url ?? "");
    res.writeHead(200, { "content-type": "application/jwk-set+json" }).end(JSON.stringify({ keys: keys() }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
