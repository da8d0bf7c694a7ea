// A capsule's fetch lanes: each lane is a fetcher on a connection of its own,
// whose fetch loop (manager.ts) fetches for the capsule's shared slots, so one
// lane's round trip overlaps the other's jobs. How many lanes a capsule gets,
// and how many jobs a lane's fetch asks for.

/**
 * How many fetch lanes (connections, each fetching for the capsule's shared
 * slots) a capsule gets unless told. A second lane lets one lane's round trip
 * overlap the other's, but only pays where each lane can still fetch large
 * batches. Basic fetch never holds more jobs than free slots, so two lanes
 * halve each batch and double the fetches: each fetch costs a socket write
 * and a reply to parse. One lane drained 14-15% faster at concurrency 10,
 * and as fast or faster with jobs that wait or compute, from concurrency 4
 * to 100 (bench/results/basic-one-lane.md).
 * Reliable fetch pays 4 commands a batch (the Lua call, its RPOP, HSET, and
 * the HDEL of the acknowledgements it carries). With fetch-ahead each lane
 * fetches batches as large as the capsule's concurrency (laneBatch), so two
 * lanes cost no more commands than one and their round trips overlap: at
 * concurrency 10 one lane spent a third of a drain waiting for Redis
 * (bench/results/reliable-two-lanes.md). Without fetch-ahead a lane's batch
 * cannot exceed its share of free slots, so the second lane comes only from
 * concurrency 16, where each batch still holds 8 jobs (bench/results/
 * hot-path-allocation.md, section 3).
 */
export function defaultFetchLanes(concurrency: number, reliable: boolean, fetchAhead = false): number {
  if (!reliable) return 1;
  return concurrency >= (fetchAhead ? 4 : 16) ? 2 : 1;
}

/**
 * The most jobs one lane's fetch asks for: its share of the slots, or, for
 * reliable fetch with fetch-ahead, the whole concurrency (the lanes share the
 * slots; what finds no free slot waits as a fetch ahead).
 */
export function laneBatch(concurrency: number, lanes: number, wholeBatches: boolean): number {
  return wholeBatches ? concurrency : Math.ceil(concurrency / lanes);
}
