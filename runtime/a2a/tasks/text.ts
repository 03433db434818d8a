/** The text of a message: its text parts, in order, joined by a space ("" when it has none). */
export function textOf(message: { readonly parts: readonly { readonly content: { readonly case: string | undefined; readonly value?: unknown } }[] } | undefined): string {
  if (message === undefined) return "";
  const texts: string[] = [];
  for (const part of message.parts) if (part.content.case === "text" && typeof part.content.value === "string") texts.push(part.content.value);
  return texts.join(" ");
}
