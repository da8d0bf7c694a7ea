// The GlobalID app of a contract's Rails app: what `client.record(model, id)`
// writes in gid://APP/Model/id. It is `GlobalID.app` as the pull read it, not
// the contract's `app` (the namespace): `config.global_id.app`, or the Rails
// app's name dasherized (MyShop -> "my-shop", where the contract says "my_shop").
import type { JobContract } from "./generated/contract.js";

const NAME_IT = "or name the app: aj.record(app, model, id)";

/**
 * The GlobalID app of the contract named `app` (the only one when there is
 * one, or when all agree); throws an error that says what to do otherwise.
 */
export function globalIdApp(contracts: JobContract | readonly JobContract[] | undefined, app?: string): string {
  if (contracts === undefined)
    throw new TypeError(
      `client.record names records with the GlobalID app the contract records: give the Client a contract pulled from the Rails app (contract pull), ${NAME_IT}`,
    );
  const list = Array.isArray(contracts) ? contracts : [contracts as JobContract];
  const names = list.map((c) => c.app).join(", ");
  const chosen = app === undefined ? list : list.filter((c) => c.app === app);
  if (chosen.length === 0)
    throw new TypeError(`client.record: no contract of app "${app}" (the contracts are of ${names})`);
  const without = chosen.find((c) => c.globalid_app === undefined);
  if (without)
    throw new TypeError(
      `client.record: the contract of ${without.app} does not record GlobalID.app (pulled by an older release, or from an app without GlobalID): pull it again from the Rails app, ${NAME_IT}`,
    );
  const gids = [...new Set(chosen.map((c) => c.globalid_app!))];
  if (gids.length > 1)
    throw new TypeError(
      `client.record: the contracts of ${names} record different GlobalID apps (${gids.join(", ")}): say which, client.record(model, id, { app: "${chosen[0]!.app}" })`,
    );
  return gids[0]!;
}
