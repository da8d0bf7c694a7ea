// The code under test: signing up enqueues the Rails app's WelcomeEmailJob on
// its "mailers" queue, a reminder for tomorrow, and a receipt mail.
import { aj, Client } from "sidekiq-bridge";

export const sidekiq = new Client({ redis: process.env.REDIS_URL ?? "redis://127.0.0.1:6379", dialect: 7 });

const DAY = 86_400;

export async function signUp(user) {
  await sidekiq.job("WelcomeEmailJob", { queue: "mailers" }).performAsync(user.id, user.email);
  await sidekiq
    .activeJob("ReminderJob")
    .set({ wait: DAY })
    .performLater(aj.record("shop", "User", user.id));
  await sidekiq.mailer("UserMailer").deliverLater("receipt", [aj.record("shop", "User", user.id)], {
    params: { plan: user.plan },
  });
}
