"""The demo's operational database: the retail shop of "Apache Hudi: The Definitive Guide",
chapter 10 (customers, products, orders, order_items) in PostgreSQL, and a generator that keeps
inserting, updating and deleting rows while the pipelines capture them, with two schema changes on
the way (a new column, a widened type), as a live database has.

Every change is its own transaction. The generator is seeded, so a run is repeatable; a few order
lines have quantity 0, which the silver pipeline's quality rule sends to its error table.
"""
from __future__ import annotations

import logging
import random
import threading
import time
from collections import Counter
from datetime import date, timedelta
from typing import Any, Callable

log = logging.getLogger(__name__)

USER = "hudi"                    # the pipelines' user: owns the tables, may read replication slots
CATEGORIES = ("books", "garden", "kitchen", "sports", "toys")
CITIES = ("Amsterdam", "Berlin", "Lisbon", "Oslo", "Porto", "Prague")
STATUSES = ("placed", "paid", "shipped")
TABLES = ("customers", "products", "orders", "order_items")

SCHEMA = """
CREATE TABLE customers (customer_id int PRIMARY KEY, name text NOT NULL, email text NOT NULL,
                        city text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE products (product_id int PRIMARY KEY, name text NOT NULL, category text NOT NULL,
                       price numeric(10,2) NOT NULL);
CREATE TABLE orders (order_id int PRIMARY KEY, customer_id int NOT NULL REFERENCES customers,
                     status text NOT NULL, order_date date NOT NULL, updated_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE order_items (item_id int PRIMARY KEY, order_id int NOT NULL REFERENCES orders ON DELETE CASCADE,
                          product_id int NOT NULL REFERENCES products, quantity int NOT NULL,
                          unit_price numeric(10,2) NOT NULL);
"""

# The aggregates gold keeps, computed in PostgreSQL: what the lakehouse must agree with.
REVENUE_BY_DAY_AND_CATEGORY = """
SELECT o.order_date, p.category, sum(i.quantity * i.unit_price)::numeric(14,2)
FROM order_items i JOIN orders o USING (order_id) JOIN products p USING (product_id)
WHERE i.quantity > 0 GROUP BY 1, 2 ORDER BY 1, 2
"""
CUSTOMER_LIFETIME_VALUE = """
SELECT o.customer_id, sum(i.quantity * i.unit_price)::numeric(14,2)
FROM order_items i JOIN orders o USING (order_id) WHERE i.quantity > 0 GROUP BY 1 ORDER BY 1
"""


def create_schema(conn, password: str) -> None:
    """The tables, owned by the pipelines' user, who has REPLICATION and may create publications."""
    from psycopg import sql

    exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (USER,)).fetchone()
    verb = "ALTER" if exists else "CREATE"
    conn.execute(sql.SQL(verb + " ROLE {} LOGIN REPLICATION PASSWORD {}").format(sql.Identifier(USER),
                                                                                 sql.Literal(password)))
    conn.execute(sql.SQL("GRANT CREATE ON DATABASE {} TO {}").format(sql.Identifier(conn.info.dbname),
                                                                    sql.Identifier(USER)))
    conn.execute(SCHEMA)
    for table in TABLES:
        conn.execute(sql.SQL("ALTER TABLE {} OWNER TO {}").format(sql.Identifier(table), sql.Identifier(USER)))


class RetailGenerator:
    """Changes to the shop, one transaction each, from a seeded random sequence."""

    def __init__(self, connect: Callable[[], Any], seed: int = 10):
        self.connect, self.rng = connect, random.Random(seed)
        self.counts: Counter[str] = Counter()
        self.next_id: dict[str, int] = {}
        self.loyalty = False

    def seed(self, customers: int = 40, products: int = 15, orders: int = 120) -> None:
        """The shop before capture starts (the pipelines' first batch is its snapshot)."""
        with self.connect() as conn:
            self._load_ids(conn)
            for _ in range(customers):
                self._new_customer(conn)
            for n in range(products):
                pid = self._id("products")
                conn.execute("INSERT INTO products VALUES (%s, %s, %s, %s)",
                             (pid, f"product-{pid}", CATEGORIES[n % len(CATEGORIES)], self._price()))
            for _ in range(orders):
                self._new_order(conn)
        self.counts.clear()

    def run(self, seconds: float, stop: threading.Event, pause: float = 0.05) -> Counter[str]:
        """Changes for ``seconds`` (or until ``stop``); a column is added a third of the way in and
        order_items.quantity widened to bigint two thirds in."""
        started = time.monotonic()
        with self.connect() as conn:
            self._load_ids(conn)
            while not stop.is_set() and time.monotonic() - started < seconds:
                elapsed = (time.monotonic() - started) / seconds
                if elapsed > 1 / 3 and not self.loyalty:
                    conn.execute("ALTER TABLE customers ADD COLUMN loyalty_tier text")
                    self.loyalty = True
                    self.counts["add column customers.loyalty_tier"] += 1
                if elapsed > 2 / 3 and not self.counts["widen order_items.quantity"]:
                    conn.execute("ALTER TABLE order_items ALTER COLUMN quantity TYPE bigint")
                    self.counts["widen order_items.quantity"] += 1
                self.step(conn)
                stop.wait(pause)
        return self.counts

    def make_changes(self, steps: int) -> None:
        """``steps`` changes now, one after another."""
        with self.connect() as conn:
            self._load_ids(conn)
            for _ in range(steps):
                self.step(conn)

    def step(self, conn) -> str:
        kind = self.rng.choices(("new order", "order status", "cancel order", "change quantity", "remove line",
                                 "customer moves", "new customer", "recategorize product", "reprice product"),
                                weights=(40, 15, 5, 8, 4, 8, 8, 3, 5))[0]
        done = {"new order": self._new_order, "order status": self._advance_status, "cancel order": self._cancel,
                "change quantity": self._change_quantity, "remove line": self._remove_line,
                "customer moves": self._move_customer, "new customer": self._new_customer,
                "recategorize product": self._recategorize, "reprice product": self._reprice}[kind](conn)
        if done is not False:
            self.counts[kind] += 1
        return kind

    # --- the changes ---------------------------------------------------------------------------
    def _new_customer(self, conn) -> None:
        cid = self._id("customers")
        conn.execute("INSERT INTO customers (customer_id, name, email, city) VALUES (%s, %s, %s, %s)",
                     (cid, f"customer {cid}", f"c{cid}@example.com", self.rng.choice(CITIES)))

    def _new_order(self, conn) -> None:
        customer = self._pick(conn, "customers", "customer_id")
        if customer is None:
            return
        oid = self._id("orders")
        day = date.today() - timedelta(days=self.rng.randrange(7))
        with conn.transaction():
            conn.execute("INSERT INTO orders (order_id, customer_id, status, order_date) VALUES (%s, %s, 'placed', %s)",
                         (oid, customer, day))
            for _ in range(self.rng.randint(1, 4)):
                product = self._pick(conn, "products", "product_id")
                price = conn.execute("SELECT price FROM products WHERE product_id = %s", (product,)).fetchone()[0]
                quantity = 0 if self.rng.random() < 0.03 else self.rng.randint(1, 5)
                conn.execute("INSERT INTO order_items VALUES (%s, %s, %s, %s, %s)",
                             (self._id("order_items"), oid, product, quantity, price))

    def _advance_status(self, conn):
        order = self._pick(conn, "orders", "order_id", "status <> 'shipped'")
        if order is None:
            return False
        conn.execute("UPDATE orders SET status = CASE status WHEN 'placed' THEN 'paid' ELSE 'shipped' END, "
                     "updated_at = now() WHERE order_id = %s", (order,))

    def _cancel(self, conn):
        order = self._pick(conn, "orders", "order_id", "status = 'placed'")
        if order is None:
            return False
        conn.execute("DELETE FROM orders WHERE order_id = %s", (order,))      # its lines go with it

    def _change_quantity(self, conn):
        item = self._pick(conn, "order_items", "item_id", "quantity > 0")
        if item is None:
            return False
        conn.execute("UPDATE order_items SET quantity = %s WHERE item_id = %s", (self.rng.randint(1, 6), item))

    def _remove_line(self, conn):
        item = self._pick(conn, "order_items", "item_id")
        if item is None:
            return False
        conn.execute("DELETE FROM order_items WHERE item_id = %s", (item,))

    def _move_customer(self, conn):
        customer = self._pick(conn, "customers", "customer_id")
        if customer is None:
            return False
        if self.loyalty:
            conn.execute("UPDATE customers SET city = %s, loyalty_tier = %s WHERE customer_id = %s",
                         (self.rng.choice(CITIES), self.rng.choice(("bronze", "silver", "gold")), customer))
        else:
            conn.execute("UPDATE customers SET city = %s WHERE customer_id = %s", (self.rng.choice(CITIES), customer))

    def _recategorize(self, conn):
        product = self._pick(conn, "products", "product_id")
        if product is None:
            return False
        conn.execute("UPDATE products SET category = %s WHERE product_id = %s", (self.rng.choice(CATEGORIES), product))

    def _reprice(self, conn):
        product = self._pick(conn, "products", "product_id")
        if product is None:
            return False
        conn.execute("UPDATE products SET price = %s WHERE product_id = %s", (self._price(), product))

    # --- helpers -------------------------------------------------------------------------------
    def _price(self) -> str:
        return f"{self.rng.randint(200, 9000) / 100:.2f}"

    def _load_ids(self, conn) -> None:
        for table, column in (("customers", "customer_id"), ("products", "product_id"), ("orders", "order_id"),
                              ("order_items", "item_id")):
            self.next_id[table] = conn.execute(f"SELECT coalesce(max({column}), 0) + 1 FROM {table}").fetchone()[0]

    def _id(self, table: str) -> int:
        value = self.next_id[table]
        self.next_id[table] = value + 1
        return value

    def _pick(self, conn, table: str, column: str, where: str = "true") -> int | None:
        """A random row's key; seeded through the generator's own random numbers, so repeatable."""
        row = conn.execute(f"SELECT {column} FROM {table} WHERE {where} ORDER BY {column} "
                           f"OFFSET floor(%s * (SELECT count(*) FROM {table} WHERE {where})) LIMIT 1",
                           (self.rng.random(),)).fetchone()
        return row[0] if row else None
