/*
  Replaces an in-flight add-on claim only if it still holds what the caller
  read: the owner storing its prepared payload, or recovery taking over the
  entry of a dead owner. A compare-and-set, so two live processes never both
  believe they own one fire time.

    Input:
      KEYS[1]   the bridge's in-flight claims hash
      ARGV[1]   the entry's field
      ARGV[2]   the entry as the caller read it
      ARGV[3]   the new entry

    Output:
      1 when replaced, 0 when the entry changed or is gone
*/
import { defineScript } from "./define-script.js";

export const replaceAddonClaim = defineScript<
  number,
  readonly [claims: string],
  readonly [field: string, expected: string, replacement: string]
>({
  name: "bridgeReplaceAddonClaim",
  lua: `
if redis.call("hget", KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call("hset", KEYS[1], ARGV[1], ARGV[3])
return 1`,
});
