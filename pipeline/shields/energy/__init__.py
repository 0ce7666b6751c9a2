"""Energy shields: energy functions, their mean-field drift, synthesis of the least steep member that meets a
violation bound (one group and two), exact violation measures and Monte Carlo simulations (pure)."""
