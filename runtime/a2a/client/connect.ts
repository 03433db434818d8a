/**
 * An A2A client from an Agent Card (spec 8.3): the card fetched from its
 * well-known URL (a cached copy revalidated with its ETag), the first of its
 * `supportedInterfaces` whose binding and protocol version this client
 * speaks taken, in the card's order or the caller's preference, and the
 * interface's URL and tenant used for every call. A gRPC interface loads
 * grpc-js then, and only then; without it installed, gRPC interfaces are
 * passed over like any binding the client does not speak.
 */
import { create, fromJson, toJson, type DescMessage, type JsonObject, type JsonValue, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import type { Binding } from "../../core/call-context.js";
import { transportFailure, type ClientCallOptions, type ClientOf } from "../../core/client/client.js";
import { createHttpJsonClient, createJsonRpcClient, type ClientOptions, type ClientProfileConfig, type ClientTables, type MethodTable } from "../../core/client/factories.js";
import type { GrpcClientOptions } from "../../core/client/grpc.js";
import { isRpcError, RpcError } from "../../core/errors.js";
import { presenceJsonOf } from "../../core/codec/presence-json.js";
import { agentCardPath } from "../agent-card.js";
import { createCardVerifier, type CardVerificationOptions, type CardVerifier } from "./card-verification.js";
import { createA2AClientProfile, type A2AClientProfileOptions } from "./profile.js";

/** Options of every A2A client. */
export interface A2AClientOptions extends ClientOptions, Omit<A2AClientProfileOptions, "protocolVersion">, GrpcDialOptions {}

/**
 * How a card's gRPC interface is dialled: grpc-js's `ChannelCredentials`
 * (default: TLS for https, grpcs or port 443) and `ChannelOptions` (e.g.
 * `grpc.keepalive_time_ms`). Typed without grpc-js, so a caller that only
 * talks JSON compiles without it installed; grpc-js checks them when it dials.
 */
export interface GrpcDialOptions {
  readonly credentials?: object;
  readonly channelOptions?: Readonly<Record<string, unknown>>;
}

/** Options of a client made from a card. */
export interface A2AConnectOptions extends A2AClientOptions {
  /** Bindings in the order preferred; default the card's order. Bindings not listed are not used. */
  readonly bindings?: readonly Binding[];
  /** Aborts fetching the card and verifying it (JWKS fetches included): CANCELLED, or DEADLINE_EXCEEDED for `AbortSignal.timeout` (D29). */
  readonly signal?: AbortSignal;
  /**
   * Checks the card's signatures (spec 8.4, D101): the public card before any
   * call, and every card GetExtendedAgentCard answers. A card that fails is
   * an AgentCardSignatureError. Default: not checked.
   */
  readonly verifyCard?: CardVerificationOptions;
  /** The largest card read. Default 1 MiB. */
  readonly maxCardBytes?: number;
}

/** The interface a client was made for, as the card lists it. */
export interface ChosenInterface {
  readonly url: string;
  readonly protocolBinding: Binding;
  readonly protocolVersion: string;
  readonly tenant: string;
}

/** The protocol versions this client speaks: 1.x, a patch number ignored (spec 3.6: only Major.Minor is negotiated). */
const speaks = (version: string) => /^1(\.\d+){0,2}$/.test(version);

/** What A2A-Version names of an interface's protocolVersion: Major.Minor ("1.0.1" is "1.0"). */
const majorMinor = (version: string) => version.split(".").slice(0, 2).join(".");

/** The A2A profile's part of a client's options: version, extensions, tenant, error classes, media type (D9). */
export function withA2AClientProfile(options: A2AClientOptions & { readonly protocolVersion?: string }): ClientOptions & ClientProfileConfig {
  return { ...options, profile: createA2AClientProfile(options), mediaType: "application/a2a+json" };
}

interface CachedCard {
  readonly etag: string;
  /** As it came: its parsed form can take thirty times its bytes (`[[],[],...]`), so a 304 parses it again. */
  readonly text: string;
}
/**
 * Cards kept for their ETag, by URL, process-wide: the last 64 used, each of at most 256 KiB of
 * UTF-8 text, and only a card a connect made a client from (read, and verified when `verifyCard`
 * is on). A caller that connects to URLs it is given kept every card it was sent, refused ones
 * too, for the process's life: 300 cards of 1 MiB held 289 MiB.
 */
const cards = new Map<string, CachedCard>();
const maxCardsKept = 64;
const maxCardKeptBytes = 256 * 1024;

/**
 * The card at `url` (an agent's base URL gets the well-known path), as
 * ProtoJSON. A card fetched before is asked for with If-None-Match, and a
 * 304 answers with the copy kept. `keep()` keeps the card for that, once
 * the caller has accepted it.
 */
export async function fetchAgentCard(
  url: string | URL,
  options: { readonly fetch?: typeof fetch; readonly headers?: Readonly<Record<string, string>>; readonly signal?: AbortSignal; readonly maxCardBytes?: number } = {},
): Promise<{ url: string; json: JsonObject; keep(): void }> {
  const target = new URL(url);
  if (target.pathname === "/" || target.pathname === "") target.pathname = agentCardPath;
  const href = target.href;
  const cached = cards.get(href);
  const headers: Record<string, string> = { ...options.headers, accept: "application/json" };
  if (cached !== undefined) headers["if-none-match"] = cached.etag;
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(href, { headers, signal: options.signal });
  } catch (err) {
    throw cardFetchFailure(err, href, options.signal);
  }
  if (response.status === 304 && cached !== undefined) return { url: href, json: JSON.parse(cached.text) as JsonObject, keep: () => keepCard(href, cached) };
  // Another answer makes the copy kept stale, whatever the caller makes of this one.
  if (cached !== undefined) cards.delete(href);
  if (!response.ok) {
    // What the agent said, if it said it as an error body (a host it does not answer to, say), within a small bound.
    const said = await readLimited(response, 4096, href).then(errorMessageOf, () => undefined);
    throw new RpcError("UNAVAILABLE", `the agent card at ${href} answered HTTP ${response.status}${said === undefined ? "" : `: ${said}`}`);
  }
  let text: string;
  try {
    text = await readLimited(response, options.maxCardBytes ?? 1 << 20, href);
  } catch (err) {
    throw cardFetchFailure(err, href, options.signal);
  }
  let json: JsonValue;
  try {
    json = JSON.parse(text) as JsonValue;
  } catch {
    throw new RpcError("INVALID_ARGUMENT", `the agent card at ${href} is not JSON`);
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) throw new RpcError("INVALID_ARGUMENT", `the agent card at ${href} is not a JSON object`);
  const etag = response.headers.get("etag");
  const kept = etag !== null && Buffer.byteLength(text) <= maxCardKeptBytes ? { etag, text } : undefined;
  return { url: href, json, keep: () => kept !== undefined && keepCard(href, kept) };
}

/** Keeps `card` as the newest, the oldest dropped past maxCardsKept. */
function keepCard(href: string, card: CachedCard): void {
  cards.delete(href);
  cards.set(href, card);
  if (cards.size > maxCardsKept) cards.delete(cards.keys().next().value as string);
}

/**
 * A card fetch that failed: the caller's abort or deadline as a call's (CANCELLED,
 * DEADLINE_EXCEEDED, D29), which no retry should take for the agent's; else the agent unreachable.
 */
function cardFetchFailure(err: unknown, href: string, signal: AbortSignal | undefined): RpcError {
  if (signal?.aborted === true) return transportFailure(err, signal);
  if (isRpcError(err)) return err;
  return new RpcError("UNAVAILABLE", `the agent card at ${href} could not be fetched: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}

/** The body as text, refused once it passes `limit` bytes (a card is a few KB; a huge one is an attack or a mistake). */
async function readLimited(response: Response, limit: number, href: string): Promise<string> {
  const tooLarge = () => new RpcError("RESOURCE_EXHAUSTED", `the agent card at ${href} is larger than ${limit} bytes (maxCardBytes)`);
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > limit) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  if (response.body === null) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) {
      await response.body.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The interfaces of a card in the order they are tried, relative URLs resolved against the card's. */
export function interfacesOf(card: JsonObject, cardUrl: string | undefined, bindings: readonly Binding[] | undefined): ChosenInterface[] {
  const listed: ChosenInterface[] = [];
  for (const item of Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces : []) {
    if (item === null || typeof item !== "object" || Array.isArray(item) || typeof item.url !== "string") continue;
    const binding = String(item.protocolBinding ?? "") as Binding;
    const url = cardUrl === undefined || binding === "GRPC" ? item.url : new URL(item.url, cardUrl).href;
    listed.push({ url, protocolBinding: binding, protocolVersion: String(item.protocolVersion ?? ""), tenant: typeof item.tenant === "string" ? item.tenant : "" });
  }
  const known: readonly Binding[] = bindings ?? ["JSONRPC", "HTTP+JSON", "GRPC"];
  const usable = listed.filter((i) => known.includes(i.protocolBinding) && speaks(i.protocolVersion));
  return bindings === undefined ? usable : bindings.flatMap((b) => usable.filter((i) => i.protocolBinding === b));
}

/** What a client made from a card knows of it. */
export interface CardClient<Card> {
  /** The card the client was made from. */
  readonly card: Card;
  /** The interface of the card it calls. */
  readonly chosenInterface: ChosenInterface;
}

/** A client of `tables` over the first interface of the card it can use. */
export async function connectA2AClient<M extends MethodTable, C extends DescMessage>(
  tables: ClientTables<M> & { readonly card: C },
  card: string | URL | MessageInitShape<C>,
  options: A2AConnectOptions = {},
): Promise<ClientOf<M> & CardClient<MessageShape<C>>> {
  const fetched = typeof card === "string" || card instanceof URL ? await fetchAgentCard(card, options) : undefined;
  // A card given as a message (or its init shape) is read as the server would write it.
  const json = fetched?.json ?? (toJson(tables.card, create(tables.card, card as never)) as JsonObject);
  const message = fromJson(tables.card, json, { ignoreUnknownFields: true }) as MessageShape<C>;
  const verifier = options.verifyCard === undefined ? undefined : createCardVerifier(tables.card, options.verifyCard);
  // A card given as a message has every REQUIRED field, as the form a server signs does.
  await verifier?.verify(fetched?.json ?? presenceJsonOf(tables.card, message), fetched?.url, { signal: options.signal });
  // Kept once a client is made from it: a card no interface of which could be used is not.
  const made = <T>(client: T): T => {
    fetched?.keep();
    return client;
  };
  const candidates = interfacesOf(json, fetched?.url, options.bindings);
  const passedOver: string[] = [];
  for (const chosen of candidates) {
    const profiled = withA2AClientProfile({ ...options, tenant: options.tenant ?? chosen.tenant, protocolVersion: majorMinor(chosen.protocolVersion) });
    const known = { card: message, chosenInterface: chosen };
    if (chosen.protocolBinding === "JSONRPC") return made(Object.assign(verifyingExtendedCards(createJsonRpcClient(tables, chosen.url, profiled), tables.card, verifier, fetched?.url), known));
    if (chosen.protocolBinding === "HTTP+JSON") return made(Object.assign(verifyingExtendedCards(createHttpJsonClient(tables, chosen.url, profiled), tables.card, verifier, fetched?.url), known));
    let grpc: typeof import("../../core/client/grpc.js");
    try {
      grpc = await import("../../core/client/grpc.js");
    } catch (err) {
      passedOver.push(`${chosen.url} (GRPC: @grpc/grpc-js could not be loaded: ${err instanceof Error ? err.message : String(err)})`);
      continue;
    }
    // The dial options were typed without grpc-js (GrpcDialOptions): grpc-js's own types from here on.
    const dialled = profiled as typeof profiled & Pick<GrpcClientOptions, "credentials" | "channelOptions">;
    return made(Object.assign(verifyingExtendedCards(grpc.createGrpcClient(tables, chosen.url, dialled), tables.card, verifier, fetched?.url), known));
  }
  const offered = Array.isArray(json.supportedInterfaces) ? JSON.stringify(json.supportedInterfaces) : "none";
  throw new RpcError(
    "FAILED_PRECONDITION",
    `the agent card lists no interface this client can use (bindings ${(options.bindings ?? ["JSONRPC", "HTTP+JSON", "GRPC"]).join(", ")}, protocol 1.x)` +
      (passedOver.length > 0 ? `; passed over ${passedOver.join(", ")}` : "") +
      `; it offers ${offered}`,
  );
}

/** The client with GetExtendedAgentCard's answer checked by `verifier` before the caller sees it. */
function verifyingExtendedCards<T extends object>(client: T, schema: DescMessage, verifier: CardVerifier | undefined, cardUrl: string | undefined): T {
  const own = client as Record<string, unknown>;
  const get = own["getExtendedAgentCard"];
  if (verifier === undefined || typeof get !== "function") return client;
  own["getExtendedAgentCard"] = async (...args: unknown[]) => {
    // The call's signal and deadline bound the verification too: its deadline is counted from the
    // call's start, as the call's own is, so a slow JWKS cannot hold the answer past it (D29).
    const signal = verificationSignal(args[1] as { readonly signal?: AbortSignal; readonly timeoutMs?: number } | undefined);
    const card = (await (get as (...a: unknown[]) => Promise<MessageShape<DescMessage>>).apply(client, args));
    // The message holds every REQUIRED field, as the form the server signed does.
    await verifier.verify(presenceJsonOf(schema, card), cardUrl, { signal });
    return card;
  };
  return client;
}

export type { ClientCallOptions };

/** A call's signal and deadline (call options, or a CallContext's signal) as one signal. */
function verificationSignal(options: { readonly signal?: AbortSignal; readonly timeoutMs?: number } | undefined): AbortSignal | undefined {
  const deadline = typeof options?.timeoutMs === "number" ? AbortSignal.timeout(options.timeoutMs) : undefined;
  const signal = options?.signal instanceof AbortSignal ? options.signal : undefined;
  if (signal === undefined) return deadline;
  return deadline === undefined ? signal : AbortSignal.any([signal, deadline]);
}

/** The `error.message` of a JSON error body (AIP-193 or JSON-RPC), or undefined. */
function errorMessageOf(text: string): string | undefined {
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } } | null)?.error?.message;
    return typeof message === "string" && message !== "" ? message : undefined;
  } catch {
    return undefined;
  }
}
