"""webhooks service: fans world events out to subscriptions and POSTs them, signed, with retries."""
