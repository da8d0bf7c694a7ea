// The Lua script registry: every script sidekiq-bridge runs, one module each
// (its header says what it does, why it must be atomic, its KEYS, ARGV and
// reply), all defined with defineScript. Shared Lua lives in includes/.
export { defineScript, type LuaInclude, type Script, type ScriptArg, type ScriptSource } from "./define-script.js";
// Reliable fetch (server/fetch/reliable-fetch.ts)
export { fetchOneIntoWorkingList } from "./fetch-one-into-working-list.js";
export { fetchBatchIntoWorkingHash } from "./fetch-batch-into-working-hash.js";
export { requeueFromWorking } from "./requeue-from-working.js";
// Scheduled poller (server/scheduled.ts)
export { popDueIntoPromotingSet } from "./pop-due-into-promoting-set.js";
export { commitPromotedBatch } from "./commit-promoted-batch.js";
// Recovery of dead processes' jobs (server/recovery.ts)
export { recoverWorkingList } from "./recover-working-list.js";
export { recoverWorkingHash } from "./recover-working-hash.js";
export { recoverPromotingSet } from "./recover-promoting-set.js";
// Migration (migration/)
export { replaceListElements } from "./replace-list-elements.js";
export { replaceSortedSetMembers } from "./replace-sorted-set-members.js";
export { moveListElements } from "./move-list-elements.js";
// Bulk actions on the sorted job sets (api/bulk-action.ts)
export { moveSetEntries } from "./move-set-entries.js";
// Add-on pollers' recoverable claims (src/addons/pollers/claims.ts)
export { claimAddonFireTime } from "./claim-addon-fire-time.js";
export { replaceAddonClaim } from "./replace-addon-claim.js";
export { pushAddonClaim } from "./push-addon-claim.js";
