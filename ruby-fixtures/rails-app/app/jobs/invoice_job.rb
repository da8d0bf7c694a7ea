# Defaults Rails apps write every day (a BigDecimal, a Symbol, a Date, a
# constant): each leaves its parameter optional, and the class checked.
class InvoiceJob < ApplicationJob
  queue_as :billing
  GRACE_DAYS = 14

  def perform(account, amount, rate = BigDecimal("0.20"), period:, window:, kind: :regular, due: Date.new(2026, 1, 31), grace: GRACE_DAYS)
    report(account: account.name, amount: (amount * (1 + rate)).to_s, period: period.to_s, window: window.to_i,
           kind: kind, due: due.iso8601, grace: grace)
  end
end
