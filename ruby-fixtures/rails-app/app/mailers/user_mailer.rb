class UserMailer < ApplicationMailer
  # Parameterized: UserMailer.with(account:).welcome(user)
  def welcome(user)
    @user = user
    @account = params[:account]
    mail(to: user.email, subject: "Welcome to #{@account.name}")
  end

  # Plain: UserMailer.receipt(user, amount, note: "...")
  def receipt(user, amount, note: nil)
    @user = user
    @amount = amount
    @note = note
    mail(to: user.email, subject: "Receipt for #{amount}")
  end
end
