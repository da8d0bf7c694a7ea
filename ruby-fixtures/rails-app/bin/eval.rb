# Boots the app and prints a Ruby snippet's value as JSON, as ../eval.rb does.
#   ruby rails-app/bin/eval.rb 'Account.count'
require_relative "../config/environment"
code = ARGV[0] || $stdin.read
result = TOPLEVEL_BINDING.eval(code, "(interop test)")
$stdout.puts "__BRIDGE_RESULT__ #{JSON.generate(result)}"
