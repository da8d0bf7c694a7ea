# A value with its Ruby type at every level (Integer digits, a Float's bits),
# so Node compares what Ruby read with what it meant to write.
module FuzzCanon
  module_function

  def canon(v)
    case v
    when Hash then ["H", v.map { |k, x| [k, canon(x)] }]
    when Array then ["A", v.map { |x| canon(x) }]
    when Integer then ["I", v.to_s]
    when Float then ["F", [v].pack("G").unpack1("H*")]
    when String then ["S", v]
    when nil then ["N"]
    when true then ["T"]
    when false then ["B"]
    else ["?", v.class.name]
    end
  end
end
