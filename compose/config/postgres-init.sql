-- The sample database of compose/: a table the CDC connector captures (runs once, on an empty
-- data volume, from /docker-entrypoint-initdb.d).
CREATE TABLE public.orders (
    id          bigserial PRIMARY KEY,
    customer    text        NOT NULL,
    amount      numeric(10, 2) NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
-- The role (POSTGRES_USER of the compose file) is the image's superuser, so it may replicate
-- and create the publication; docs/deploy.md says what a production role needs.
INSERT INTO public.orders (customer, amount) VALUES
    ('ada', 12.50), ('grace', 99.00), ('linus', 7.25);
