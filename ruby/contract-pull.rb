# sidekiq-bridge's contract extractor: run inside a Ruby app, it lists every
# Sidekiq job class (Sidekiq::Job / Sidekiq::Worker) and every ActiveJob class
# with what perform accepts, its sidekiq_options, queue_as and add-on limits,
# and the argument types of the app's RBS signatures (sig/). It prints one
# line, `__SIDEKIQ_BRIDGE_CONTRACT__ <json>`, which `sidekiq-bridge contract
# pull` turns into the contract file; every problem is one line on stderr and
# the class concerned is marked `unchecked`, never a crash.
#
#   sidekiq-bridge contract pull --ruby "bundle exec ruby -" -- app/jobs/*.rb
#   bundle exec ruby contract-pull.rb [--app NAME] [--sig DIR]... [--rails] [FILE...]
#   bin/rails runner - < contract-pull.rb          (eager-loads the Rails app)
#
# FILE... are required first (a plain Sidekiq app). With Rails loaded, the app
# is eager-loaded. --sig DIR reads RBS from DIR (default: ./sig when present).
# Ruby 3.1 (bookworm) to 3.4; rbs 2.x and 3.x.
require "json"

module SidekiqBridgeContract
  MARK = "__SIDEKIQ_BRIDGE_CONTRACT__"
  AJ_WRAPPERS = %w[Sidekiq::ActiveJob::Wrapper ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper].freeze
  # Keys of sidekiq-unique-jobs' sidekiq_options (copied to addons.lock too).
  LOCK_KEYS = /\A(lock|lock_.*|on_conflict|unique_.*)\z/

  class Pull
    def initialize(argv)
      @app = nil
      @sig_dirs = []
      @files = []
      @rails = false
      @failed = {}
      @problems = 0
      args = argv.dup
      until args.empty?
        a = args.shift
        case a
        when "--app" then @app = args.shift
        when "--sig" then @sig_dirs << args.shift
        when "--rails" then @rails = true
        when "--" then next
        else @files << a
        end
      end
    end

    def note(message)
      @problems += 1
      $stderr.puts "contract pull: #{message}"
    end

    def run
      load_files
      eager_load_rails if @rails || (defined?(::Rails) && ::Rails.respond_to?(:application) && ::Rails.application)
      sigs = load_rbs
      classes = {}
      # A class whose file failed to load is half-defined: only the failure is reported.
      @failed.each { |name, why| classes[name] = {"kind" => "sidekiq", "unchecked" => why} }
      sidekiq_classes.each { |k| classes[k.name] ||= guarded(k) { describe_sidekiq(k, sigs) } }
      active_job_classes.each { |k| classes[k.name] ||= guarded(k) { describe_active_job(k, sigs) } }
      # Each mailer action as "Mailer#action": what deliver_later's args: must fit.
      mailer_classes.each do |k|
        k.action_methods.sort.each { |a| classes["#{k.name}##{a}"] ||= guarded(k) { describe_mailer_action(k, a) } }
      end
      classes.compact!
      doc = {
        "contract" => 1,
        "app" => @app || default_app,
        "source" => source_info(sigs),
        "classes" => classes.sort.to_h
      }
      defaults = active_job_defaults
      doc["activejob_defaults"] = defaults if defaults
      gid = globalid_app
      doc["globalid_app"] = gid if gid
      $stdout.puts "#{MARK} #{JSON.generate(doc)}"
      $stdout.flush
    end

    private

    # A class whose description raises is still listed, unchecked, with the reason.
    def guarded(klass)
      yield
    rescue StandardError, ScriptError, SystemExit => e
      note "#{klass.name}: could not be read (#{e.class}: #{first_line(e.message)}); marked unchecked"
      {"kind" => klass_kind(klass), "unchecked" => "could not be read: #{e.class}: #{first_line(e.message)}"}
    end

    # The first line of a message, with the app's own paths made relative:
    # the same app checked out in another folder gives the same contract.
    def first_line(s)
      line = s.to_s.lines.first.to_s.strip
      roots = [Dir.pwd]
      roots << ::Rails.root.to_s if defined?(::Rails) && ::Rails.respond_to?(:root) && ::Rails.root
      roots.uniq.reduce(line) { |l, root| l.gsub("#{root}/", "") }
    end

    def klass_kind(klass)
      defined?(::ActiveJob::Base) && klass < ::ActiveJob::Base ? "activejob" : "sidekiq"
    end

    def default_app
      if defined?(::Rails) && ::Rails.respond_to?(:application) && ::Rails.application
        mod = ::Rails.application.class.respond_to?(:module_parent_name) ? ::Rails.application.class.module_parent_name : nil
        return underscore(mod) if mod
      end
      File.basename(Dir.pwd)
    end

    # What ActiveJob's serialize writes when a job sets neither (activejob
    # core.rb: I18n.locale, and Time.zone&.name from the job's creation).
    def active_job_defaults
      return nil unless defined?(::ActiveJob::Base) && defined?(::I18n)
      {"locale" => ::I18n.locale.to_s, "timezone" => (::Time.zone&.name if ::Time.respond_to?(:zone))}
    end

    # The app of the app's GlobalIDs (gid://APP/Model/id): config.global_id.app,
    # else the Rails app's name dasherized, which is not always the contract's app.
    def globalid_app
      return nil unless defined?(::GlobalID) && ::GlobalID.respond_to?(:app)
      ::GlobalID.app.to_s.then { |a| a.empty? ? nil : a }
    end

    def source_info(sigs)
      info = {"side" => "ruby", "ruby" => RUBY_VERSION}
      info["sidekiq"] = ::Sidekiq::VERSION if defined?(::Sidekiq::VERSION)
      info["activejob"] = ::ActiveJob.version.to_s if defined?(::ActiveJob) && ::ActiveJob.respond_to?(:version)
      info["rbs"] = ::RBS::VERSION if sigs.any? && defined?(::RBS::VERSION)
      info["types"] = sigs.any? ? "rbs" : "none"
      info
    end

    # --- loading ---------------------------------------------------------

    # A file that calls exit or abort while loading (SystemExit) is named like
    # any other that fails: nothing crashes the pull but a Ruby that cannot start.
    def load_files
      @files.each do |f|
        require File.expand_path(f)
      rescue ScriptError, StandardError, SystemExit => e
        name = camelize(File.basename(f, ".rb"))
        why = "failed to load #{f}: #{e.class}: #{first_line(e.message)}"
        note "#{name}: #{why}; marked unchecked"
        @failed[name] = why
      end
    end

    # Each job file on its own, so one that fails to load is named and the rest still load.
    def eager_load_rails
      root = ::Rails.root.to_s
      Dir.glob(File.join(root, "app", "{jobs,workers,sidekiq}", "**", "*.rb")).sort.each do |path|
        rel = path.sub(%r{\A#{Regexp.escape(root)}/app/[^/]+/}, "").sub(/\.rb\z/, "")
        name = rel.split("/").map { |p| camelize(p) }.join("::")
        begin
          Object.const_get(name)
        rescue ScriptError, StandardError, SystemExit => e
          why = "failed to load #{path.sub("#{root}/", "")}: #{e.class}: #{first_line(e.message)}"
          note "#{name}: #{why}; marked unchecked"
          @failed[name] = why
        end
      end
      begin
        ::Rails.application.eager_load!
      rescue ScriptError, StandardError, SystemExit => e
        note "eager_load! stopped (#{e.class}: #{first_line(e.message)}); the classes loaded so far are listed"
      end
    end

    def camelize(s)
      s.split("_").map { |p| p[0].to_s.upcase + p[1..].to_s }.join
    end

    def underscore(s)
      s.gsub("::", "/").gsub(/([a-z\d])([A-Z])/, '\1_\2').downcase
    end

    # --- discovery -------------------------------------------------------

    def sidekiq_classes
      return [] unless defined?(::Sidekiq)
      mod = defined?(::Sidekiq::Job) ? ::Sidekiq::Job : ::Sidekiq::Worker
      named_classes.select do |k|
        k.include?(mod) && !AJ_WRAPPERS.include?(k.name) && !k.name.start_with?("Sidekiq::")
      end
    end

    def active_job_classes
      return [] unless defined?(::ActiveJob::Base)
      named_classes.select { |k| k < ::ActiveJob::Base }
    end

    def mailer_classes
      return [] unless defined?(::ActionMailer::Base)
      named_classes.select { |k| k < ::ActionMailer::Base && !k.abstract? }
    end

    def named_classes
      ObjectSpace.each_object(Class).select do |k|
        n = k.name
        n.is_a?(String) && !n.empty? && (Object.const_get(n) == k rescue false)
      end.sort_by(&:name)
    end

    # --- one class -------------------------------------------------------

    def describe_sidekiq(klass, sigs)
      entry = {"kind" => "sidekiq"}
      fill_params(entry, klass, sigs) or return entry
      raw = klass.respond_to?(:get_sidekiq_options) ? klass.get_sidekiq_options : {}
      entry["options"] = json_options(raw.reject { |k, _| k.to_s == "pool" })
      addons = addon_options(klass, entry["options"])
      # A pool is a shard: the class's jobs go to another Redis, and the pool is never in the payload.
      addons["pool"] = "sidekiq_options pool: #{raw["pool"].class} (the class's jobs go to another Redis)" if raw["pool"] || raw[:pool]
      entry["addons"] = addons unless addons.empty?
      entry
    end

    def describe_active_job(klass, sigs)
      m = klass.instance_method(:perform)
      # ApplicationJob and other abstract parents: perform is ActiveJob's own.
      return nil if m.owner.name.to_s.start_with?("ActiveJob::")
      entry = {"kind" => "activejob"}
      fill_params(entry, klass, sigs) or return entry
      aj = {"queue" => aj_queue(klass), "priority" => aj_priority(klass)}
      # queue_as with a block: the queue comes from each job's arguments.
      aj["dynamic_queue"] = true if klass.queue_name.respond_to?(:call)
      wrapper = AJ_WRAPPERS.find { |w| Object.const_defined?(w) rescue false }
      aj["wrapper"] = wrapper if wrapper
      entry["activejob"] = aj
      # The adapter pushes to queue_as; the other sidekiq_options (retry...) apply (Sidekiq 7.3+).
      opts = klass.respond_to?(:get_sidekiq_options) ? json_options(klass.get_sidekiq_options).except("queue") : {}
      entry["options"] = opts unless opts.empty?
      entry
    end

    def describe_mailer_action(klass, action)
      entry = {"kind" => "mailer"}
      fill_params(entry, klass, {}, action.to_sym)
      entry
    end

    def aj_queue(klass)
      q = klass.queue_name
      q.respond_to?(:call) ? nil : q.to_s
    end

    def aj_priority(klass)
      p = klass.respond_to?(:priority) ? klass.priority : nil
      p.is_a?(Integer) ? p : nil
    end

    # Sets params (and types); false when the class is unchecked.
    def fill_params(entry, klass, sigs, meth = :perform)
      m = begin
        klass.instance_method(meth)
      rescue NameError
        nil
      end
      if m.nil?
        why = if klass.instance_method(:method_missing).owner != BasicObject
          "perform is answered by method_missing, so its parameters are unknown"
        else
          "defines no perform method"
        end
        note "#{klass.name}: #{why}; marked unchecked"
        entry["unchecked"] = why
        return false
      end
      loc = m.source_location
      entry["location"] = "#{relative(loc[0])}:#{loc[1]}" if loc
      defaults = read_defaults(m)
      sig = sigs[klass.name]
      params = m.parameters.each_with_index.map do |(kind, name), i|
        p = {"name" => param_name(kind, name, i), "kind" => kind.to_s}
        # Only the source: a default is Ruby's business (a Symbol, a BigDecimal, a constant), never the caller's.
        p["default"] = defaults[p["name"]] if defaults.key?(p["name"])
        p
      end
      apply_types(klass, params, sig) if sig
      entry["params"] = params
      entry["types"] = sig ? "rbs" : "none"
      true
    end

    def param_name(kind, name, i)
      return name.to_s if name && !%i[* ** &].include?(name)
      {rest: "args", keyrest: "kwargs", block: "block", nokey: "nokey"}[kind] || "arg#{i}"
    end

    def relative(path)
      path.start_with?("#{Dir.pwd}/") ? path.sub("#{Dir.pwd}/", "") : path
    end

    # sidekiq_options as Sidekiq writes them into a payload: String keys, JSON values.
    def json_options(opts)
      out = {}
      opts.each do |k, v|
        key = k.to_s
        out[key] = key == "queue" ? v.to_s : json_value(v)
      end
      out.sort.to_h
    end

    def json_value(v)
      case v
      when nil, true, false, String, Integer then v
      when Float then v.finite? ? v : v.to_s
      when Symbol then v.to_s
      when Array then v.map { |x| json_value(x) }
      when Hash then v.to_h { |k, x| [k.to_s, json_value(x)] }
      else
        return v.to_i if defined?(::ActiveSupport::Duration) && v.is_a?(::ActiveSupport::Duration)
        v.respond_to?(:call) ? "(computed: #{v.class})" : v.to_s
      end
    end

    def addon_options(klass, options)
      out = {}
      lock = options.select { |k, _| k.match?(LOCK_KEYS) }
      out["lock"] = lock unless lock.empty?
      throttle = throttle_options(klass)
      out["throttle"] = throttle if throttle
      out
    end

    def throttle_options(klass)
      return nil unless defined?(::Sidekiq::Throttled::Registry)
      strategy = ::Sidekiq::Throttled::Registry.get(klass.name)
      return nil unless strategy
      out = {}
      if (c = first_strategy(strategy.concurrency))
        out["concurrency"] = {"limit" => limit_value(c.instance_variable_get(:@limit))}
        ttl = c.instance_variable_get(:@lost_job_threshold) || c.instance_variable_get(:@ttl)
        out["concurrency"]["ttl"] = ttl if ttl.is_a?(Numeric)
      end
      if (t = first_strategy(strategy.threshold))
        out["threshold"] = {"limit" => limit_value(t.instance_variable_get(:@limit)),
                            "period" => limit_value(t.instance_variable_get(:@period))}
      end
      out
    end

    def first_strategy(s)
      return nil if s.nil?
      s.respond_to?(:strategies) ? s.strategies.first : s
    end

    def limit_value(v)
      v.respond_to?(:call) ? "dynamic" : (v.is_a?(Float) && v == v.to_i ? v.to_i : v)
    end

    # --- defaults ----------------------------------------------------------

    # name -> the Ruby source of its default, for opt and key params.
    def read_defaults(m)
      return {} unless defined?(RubyVM::AbstractSyntaxTree)
      ast = RubyVM::AbstractSyntaxTree.of(m)
      args = ast&.children&.[](1)
      return {} unless args && args.type == :ARGS
      lines = File.readlines(m.source_location[0])
      out = {}
      each_link(args.children[2]) { |asgn| add_default(out, asgn, lines) }
      each_link(args.children[7]) { |asgn| add_default(out, asgn, lines) }
      out
    rescue StandardError
      {}
    end

    def each_link(node)
      while node.respond_to?(:children) && %i[OPT_ARG KW_ARG].include?(node.type)
        yield node.children[0]
        node = node.children[1]
      end
    end

    def add_default(out, asgn, lines)
      name, value = asgn.children
      return unless value.respond_to?(:type)
      out[name.to_s] = slice(lines, value)
    end

    def slice(lines, node)
      if node.first_lineno == node.last_lineno
        lines[node.first_lineno - 1].to_s[node.first_column...node.last_column].to_s
      else
        text = lines[(node.first_lineno - 1)..(node.last_lineno - 1)].join
        text[node.first_column..(text.length - (lines[node.last_lineno - 1].length - node.last_column) - 1)].to_s
      end.strip
    end

    # --- RBS -----------------------------------------------------------------

    # class name -> the RBS function of its instance method perform.
    def load_rbs
      dirs = @sig_dirs.empty? ? [File.join(Dir.pwd, "sig")].select { |d| File.directory?(d) } : @sig_dirs
      dirs = dirs.select { |d| File.directory?(d) || (note("--sig #{d} is not a folder; ignored") && false) }
      return {} if dirs.empty?
      begin
        require "rbs"
      rescue LoadError => e
        note "RBS signatures in #{dirs.join(", ")} were not read: the rbs gem is not available (#{first_line(e.message)})"
        return {}
      end
      out = {}
      dirs.flat_map { |d| Dir.glob(File.join(d, "**", "*.rbs")).sort }.each do |file|
        decls = parse_rbs(File.read(file))
        walk_rbs(decls, [], out, file)
      rescue StandardError, ScriptError, SystemExit => e
        note "#{relative(file)}: not read (#{e.class}: #{first_line(e.message)})"
      end
      out
    end

    def parse_rbs(text)
      r = ::RBS::Parser.parse_signature(text)
      # rbs 3.x: [buffer, directives, decls]; 2.x: decls.
      r.is_a?(Array) && r.size == 3 && r[0].is_a?(::RBS::Buffer) ? r[2] : r
    end

    def walk_rbs(decls, ns, out, file)
      decls.each do |d|
        next unless d.respond_to?(:members) && d.respond_to?(:name)
        name = (ns + [d.name.to_s.sub(/\A::/, "")]).join("::")
        d.members.each do |m|
          if m.is_a?(::RBS::AST::Members::MethodDefinition) && m.name == :perform && m.kind != :singleton
            types = m.respond_to?(:overloads) ? m.overloads.map(&:method_type) : m.types
            note "#{name}: perform has #{types.size} RBS overloads in #{relative(file)}; the first is used" if types.size > 1
            out[name] = types.first.type
          end
        end
        walk_rbs(d.members, name.split("::"), out, file)
      end
    end

    def apply_types(klass, params, fn)
      unless fn.respond_to?(:required_positionals)
        note "#{klass.name}: its RBS perform takes (?); arguments are checked as any JSON value"
        return
      end
      pos = {req: fn.required_positionals.dup, opt: fn.optional_positionals.dup}
      params.each do |p|
        rbs = case p["kind"]
        when "req" then pos[:req].shift || (fn.trailing_positionals || []).first
        when "opt" then pos[:opt].shift
        when "rest" then fn.rest_positionals
        when "keyreq" then fn.required_keywords[p["name"].to_sym] || fn.optional_keywords[p["name"].to_sym]
        when "key" then fn.optional_keywords[p["name"].to_sym] || fn.required_keywords[p["name"].to_sym]
        when "keyrest" then fn.rest_keywords
        end
        next unless rbs
        p["type"] = rbs.type.to_s
        schema = type_schema(rbs.type, klass)
        p["schema"] = schema unless schema == {}
      end
    end

    JSON_CLASSES = {
      "Integer" => {"type" => "integer"}, "Float" => {"type" => "number"}, "Numeric" => {"type" => "number"},
      "String" => {"type" => "string"}, "TrueClass" => {"const" => true}, "FalseClass" => {"const" => false},
      "NilClass" => {"type" => "null"}
    }.freeze

    def type_schema(t, klass)
      case t
      when ::RBS::Types::Bases::Bool then {"type" => "boolean"}
      when ::RBS::Types::Bases::Nil then {"type" => "null"}
      when ::RBS::Types::Bases::Bottom then false
      when ::RBS::Types::Optional then {"anyOf" => [type_schema(t.type, klass), {"type" => "null"}]}
      when ::RBS::Types::Union then {"anyOf" => t.types.map { |x| type_schema(x, klass) }}
      when ::RBS::Types::Literal
        v = t.literal
        v.is_a?(Symbol) ? not_json(t, klass) : {"const" => v}
      when ::RBS::Types::Tuple
        items = t.types.map { |x| type_schema(x, klass) }
        {"type" => "array", "prefixItems" => items, "items" => false, "minItems" => items.size}
      when ::RBS::Types::Record
        fields = t.fields
        optional = t.respond_to?(:optional_fields) ? t.optional_fields : {}
        props = fields.merge(optional).to_h { |k, v| [k.to_s, type_schema(v, klass)] }
        {"type" => "object", "properties" => props, "required" => fields.keys.map(&:to_s)}
      when ::RBS::Types::ClassInstance
        n = t.name.to_s.sub(/\A::/, "")
        if JSON_CLASSES.key?(n) then JSON_CLASSES[n]
        elsif n == "Array" then {"type" => "array", "items" => t.args[0] ? type_schema(t.args[0], klass) : {}}
        elsif n == "Hash"
          key = t.args[0] && t.args[0].to_s.sub(/\A::/, "")
          return not_json(t, klass) if key && !%w[String untyped].include?(key)
          {"type" => "object", "additionalProperties" => t.args[1] ? type_schema(t.args[1], klass) : {}}
        else not_json(t, klass)
        end
      else {}
      end
    end

    # A type JSON has no form for (Symbol, Time, a model): checked as any value, and said so.
    def not_json(t, klass)
      note "#{klass.name}: RBS type #{t} has no JSON form; that argument is checked as any JSON value"
      {}
    end
  end
end

SidekiqBridgeContract::Pull.new(ARGV).run
