"""`fairstream dashboard`: a live page of a job's estimates, alerts, shield and health, served from the installed package."""
