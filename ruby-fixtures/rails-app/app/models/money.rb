# A value with its own ActiveJob serializer, which Node does not know.
Money = Struct.new(:amount, :currency)
