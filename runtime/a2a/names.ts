/**
 * The names A2A's rules are recognised by, full names only: the generator
 * switches the A2A profile on for this service and no other, and serves
 * the public Agent Card as this message.
 */
export const a2aServiceName = "lf.a2a.v1.A2AService";
export const agentCardTypeName = "lf.a2a.v1.AgentCard";
