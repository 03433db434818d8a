/**
 * The Agent Card for A2A 0.3 callers (D111). A 0.3 client finds an agent by
 * the card's top-level `url` and `preferredTransport`, and its other
 * endpoints in `additionalInterfaces`; 1.0 replaced all three (and the
 * card's `protocolVersion`) with `supportedInterfaces`. The public card keeps
 * every 1.0 field and adds the 0.3 ones beside them, none of which 1.0 has,
 * so each version's client reads its own (1.0 readers ignore unknown fields).
 * The extended card, asked for by a 0.3 method, is translated whole.
 */
import { setOwn } from "../../core/codec/own-property.js";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { obj, type Dialect, type Obj } from "./v03-shapes.js";

/** What 0.3 cards say in `protocolVersion`. */
export const v03CardVersion = "0.3.0";

function interfacesOf(card: Obj): { url: string; transport: string }[] {
  const all = (Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces : []).map(obj);
  const v03 = all.filter((i) => typeof i.protocolVersion === "string" && i.protocolVersion.startsWith("0.3"));
  return (v03.length > 0 ? v03 : all).map((i) => ({ url: String(i.url ?? ""), transport: String(i.protocolBinding ?? "") }));
}

/** 1.0's `securityRequirements` as 0.3's `security`: `[{name: [scopes]}]`, or the proto's `[{schemes: {name: {list}}}]`. */
function securityTo03(requirements: JsonValue | undefined, dialect: Dialect): JsonValue[] | undefined {
  if (!Array.isArray(requirements)) return undefined;
  if (dialect === "proto") return requirements;
  return requirements.map((r) => {
    const out: JsonObject = {};
    for (const [name, scopes] of Object.entries(obj(obj(r).schemes))) setOwn(out, name, (obj(scopes).list as JsonValue[] | undefined) ?? []);
    return out;
  });
}

/** 1.0's SecurityScheme (a oneof of wrapper keys) as 0.3's OpenAPI-style object. DeviceCode flows and `pkceRequired` have no 0.3 counterpart. */
function schemeTo03(scheme: Obj): JsonObject {
  const [key, value] = Object.entries(scheme)[0] ?? ["", {}];
  const s = obj(value);
  const description: JsonObject = typeof s.description === "string" ? { description: s.description } : {};
  switch (key) {
    case "apiKeySecurityScheme":
      return { type: "apiKey", in: s.location ?? "header", name: s.name ?? "", ...description };
    case "httpAuthSecurityScheme":
      return { type: "http", scheme: s.scheme ?? "", ...(s.bearerFormat === undefined ? {} : { bearerFormat: s.bearerFormat }), ...description };
    case "oauth2SecurityScheme": {
      const flows: JsonObject = {};
      for (const [flow, f] of Object.entries(obj(s.flows))) {
        if (flow === "deviceCode") continue;
        const { pkceRequired: _pkce, ...rest } = obj(f) as JsonObject;
        setOwn(flows, flow, rest);
      }
      return { type: "oauth2", flows, ...(s.oauth2MetadataUrl === undefined ? {} : { oauth2MetadataUrl: s.oauth2MetadataUrl }), ...description };
    }
    case "openIdConnectSecurityScheme":
      return { type: "openIdConnect", openIdConnectUrl: s.openIdConnectUrl ?? "", ...description };
    default:
      return { type: "mutualTLS", ...description };
  }
}

/**
 * The 0.3 fields of a card: `protocolVersion`, `url`, `preferredTransport`
 * (the first interface), `additionalInterfaces` (all of them, the first
 * included, as 0.3 advises), `supportsAuthenticatedExtendedCard` and `security`.
 */
export function v03CardFields(card: Obj, dialect: Dialect): JsonObject {
  const interfaces = interfacesOf(card);
  const out: JsonObject = {
    protocolVersion: v03CardVersion,
    url: interfaces[0]?.url ?? "",
    preferredTransport: interfaces[0]?.transport ?? "JSONRPC",
    additionalInterfaces: interfaces,
    supportsAuthenticatedExtendedCard: obj(card.capabilities).extendedAgentCard === true,
  };
  const security = securityTo03(card.securityRequirements, dialect);
  if (security !== undefined) out.security = security;
  return out;
}

/** A whole 1.0 card (the extended card) as 0.3's. */
export function cardTo03(card: Obj, dialect: Dialect): JsonObject {
  // Signatures cover the 1.0 form (D111): over this one they could only fail a 0.3 verifier.
  const { supportedInterfaces: _i, securityRequirements: _s, signatures: _g, securitySchemes, capabilities, skills, ...rest } = card as JsonObject;
  const { extendedAgentCard: _e, ...caps } = obj(capabilities) as JsonObject;
  const out: JsonObject = { ...rest, ...v03CardFields(card, dialect), capabilities: caps };
  // The v0.3.0 proto's AgentCard has no icon_url (0.3's JSON-RPC card has iconUrl).
  if (dialect === "proto") delete out.iconUrl;
  if (securitySchemes !== undefined) {
    const schemes: JsonObject = {};
    // Names are the operator's map keys: set as own properties, so even "__proto__" stays a scheme.
    for (const [name, scheme] of Object.entries(obj(securitySchemes))) setOwn(schemes, name, dialect === "proto" ? (scheme as JsonValue) : schemeTo03(obj(scheme)));
    out.securitySchemes = schemes;
  }
  out.skills = (Array.isArray(skills) ? skills : []).map((skill) => {
    const { securityRequirements, ...s } = obj(skill) as JsonObject;
    const security = securityTo03(securityRequirements, dialect);
    return security === undefined ? s : { ...s, security };
  });
  return out;
}
