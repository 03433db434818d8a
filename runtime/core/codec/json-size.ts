/**
 * About how many bytes a message takes in JSON, weighed before it is written: what keeps an
 * answer made of many stored things (a page of a list) within a size. Counted on the message as
 * it is, with nothing allocated, and no further than `budget`: a value past it answers a number
 * above `budget`, however large it is.
 *
 * Strings count their UTF-8 bytes and their quotes, bytes their base64, a number 20, each key its
 * length and punctuation. A message's own bookkeeping (`$typeName`, a oneof's `case`) is counted
 * as if it were written, so the weight leans high, except for escapes, which are not weighed (a
 * scan of every character would cost what writing does): text of newlines and quotes writes twice
 * its weight, of other control characters six times.
 */
export function jsonSizeWithin(value: unknown, budget: number): number {
  return weigh(value, 0, budget);
}

function weigh(value: unknown, total: number, budget: number): number {
  switch (typeof value) {
    case "string":
      return total + Buffer.byteLength(value) + 2;
    case "number":
    case "bigint":
      return total + 20;
    case "boolean":
      return total + 5;
    case "object":
      break;
    default:
      return total;
  }
  if (value === null) return total + 4;
  if (value instanceof Uint8Array) return total + Math.ceil(value.byteLength / 3) * 4 + 2;
  if (Array.isArray(value)) {
    total += 2;
    for (let i = 0; i < value.length && total <= budget; i++) total = weigh(value[i], total + 1, budget);
    return total;
  }
  total += 2;
  const fields = value as Record<string, unknown>;
  for (const key in fields) {
    if (total > budget) break;
    total = weigh(fields[key], total + key.length + 4, budget);
  }
  return total;
}
