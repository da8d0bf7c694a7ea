// The fetch path, from one place: how a job gets from its queue to a slot and
// back out. The manager (../manager.ts) drives it; every file it needs is in
// this folder, in the order a job meets them:
//
//   server-features.ts  what the Redis can do (BLMPOP, RPOP with a count), read once at start
//   fetch-lanes.ts      a capsule's lanes: one fetcher and one blocking connection each, how many,
//                       how many jobs a lane asks for, the reclaim after a lost reply
//   slots.ts            the capsule's slots the lanes share: free, reserved by a fetch in flight, running
//   fetch.ts            what a fetcher is (retrieve, acknowledge, requeue, hand back) and its UnitOfWork
//   basic-fetch.ts      Sidekiq's BRPOP (BLMPOP for a batch): the job lives only in this process
//   reliable-fetch.ts   the default: the job moves into this process's working hash or list
//   working-keys.ts     the names of those working keys and the key lists each Lua fetch passes
//   fetch-ahead.ts      reliable fetch only: a batch fetched while every slot is busy waits here
//   ack-queue.ts        reliable fetch's acknowledgements, carried by the next fetch of any lane
//
// Then the job runs (../processor.ts, its slot in ../work-state.ts) and the
// fetcher acknowledges it, or puts it back. Jobs a dead process left in its
// working keys come back through ../recovery.ts.
//
// Files in this folder import each other directly; the rest of the server
// imports this entry, so the fetch's inside can change without touching it.
export { AckQueue } from "./ack-queue.js";
export { BasicFetch } from "./basic-fetch.js";
export type { Fetcher, UnitOfWork } from "./fetch.js";
export { FetchAhead } from "./fetch-ahead.js";
export { defaultFetchLanes, FetchLanes, laneBatch, spareLanes } from "./fetch-lanes.js";
export { ReliableFetch } from "./reliable-fetch.js";
export { detectFeatures, type ServerFeatures } from "./server-features.js";
export { Slots } from "./slots.js";
