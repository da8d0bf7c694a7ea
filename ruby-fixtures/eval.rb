# Runs a Ruby snippet with real Sidekiq loaded and prints its value as JSON on
# the last line, after the marker the harness looks for.
#   ruby eval.rb 'Sidekiq::Queue.new("default").size'
require_relative "lib/jobs"
code = ARGV[0] || $stdin.read
result = TOPLEVEL_BINDING.eval(code, "(interop test)")
$stdout.puts "__BRIDGE_RESULT__ #{JSON.generate(result)}"
