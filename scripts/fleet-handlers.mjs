// Handlers of the fleet's Node worker (docker-compose.yml, service node-worker):
// jobs any Ruby process enqueues on queue "node", e.g.
//   docker compose exec sidekiq-6 ruby eval.rb 'Sidekiq::Client.push("class" => "GreeterJob", "queue" => "node", "args" => ["Ruby 6"])'
export default (worker) => {
  worker.register("GreeterJob", ([name]) => {
    console.log(`GreeterJob: hello ${name}, from Node ${process.version}`);
  });
};
