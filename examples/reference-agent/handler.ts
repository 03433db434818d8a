/**
 * The reference agent as a complete handler: its executor on the generated
 * task runtime, and the extended card it hands to authenticated callers.
 * Shared by main.ts and the suites that serve the reference agent.
 */
import type { TaskHandlerOptions } from "protoc-gen-a2a/runtime/tasks";
import type { AgentCard } from "../../generated/a2a_pb.js";
import { createA2AServiceTaskHandler, type A2AServiceTaskHandler } from "../../generated/a2a_tasks.js";
import { echoWords } from "./agent.js";

export function createReferenceAgent(extendedCard: AgentCard, options: TaskHandlerOptions = {}): A2AServiceTaskHandler & { getExtendedAgentCard(): Promise<AgentCard> } {
  return { ...createA2AServiceTaskHandler(echoWords, options), getExtendedAgentCard: async () => extendedCard };
}
