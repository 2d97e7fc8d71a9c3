"""Regenerate the bundled demo tables (seeded, so the output is byte-for-byte stable).

    python3 reconstruct/dataenv/data/make_data.py [OUT_DIR]

Writes ``orders.csv`` (1,500 orders, 2023-01 … 2024-06, missing amounts and channels),
``customers.jsonl`` (250 customers, missing segments and ages) and ``products.parquet``
(60 products, missing ratings) next to this file.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import sys
from pathlib import Path

import polars as pl

HERE = Path(__file__).resolve().parent
SEED = 20240601
FIRST = [
    "Ada",
    "Alan",
    "Bea",
    "Cyd",
    "Dana",
    "Eli",
    "Finn",
    "Gus",
    "Hana",
    "Ivo",
    "Jana",
    "Kai",
    "Lena",
    "Milo",
    "Nora",
    "Otto",
    "Pia",
    "Quin",
    "Rosa",
    "Sven",
    "Tara",
    "Udo",
    "Vera",
    "Wim",
    "Xena",
    "Yara",
    "Zeno",
]
LAST = [
    "Adler",
    "Brandt",
    "Costa",
    "Dubois",
    "Eriksen",
    "Fischer",
    "Garcia",
    "Horvat",
    "Ito",
    "Jensen",
    "Kowalski",
    "Lopez",
    "Moreau",
    "Novak",
    "Olsen",
    "Petrov",
    "Rossi",
    "Silva",
    "Tanaka",
    "Urban",
    "Vogel",
    "Weber",
]
COUNTRIES = ("DE", "FR", "US", "UK", "ES", "IT", "NL", "JP")
CATEGORIES = ("Books", "Electronics", "Garden", "Toys", "Kitchen", "Sports", "Beauty", "Office")
ADJECTIVES = ["Swift", "Quiet", "Bright", "Solid", "Smart", "Classic", "Tiny", "Grand"]


def customers(rng: random.Random) -> list[dict[str, object]]:
    names = rng.sample([f"{f} {last}" for f in FIRST for last in LAST], 250)
    rows: list[dict[str, object]] = []
    for n, name in enumerate(names, 1):
        signup = dt.date(2020, 1, 1) + dt.timedelta(days=rng.randrange(1400))
        rows.append(
            {
                "customer_id": f"C{n:04d}",
                "name": name,
                "country": rng.choices(COUNTRIES, weights=(9, 6, 8, 5, 3, 3, 2, 2))[0],
                "segment": None
                if rng.random() < 0.08
                else rng.choice(("Consumer", "Business", "Enterprise")),
                "signup_date": signup.isoformat(),
                "age": None if rng.random() < 0.1 else rng.randint(18, 80),
            }
        )
    return rows


def products(rng: random.Random) -> pl.DataFrame:
    rows = []
    for n in range(1, 61):
        category = CATEGORIES[(n - 1) % len(CATEGORIES)]
        rows.append(
            {
                "product_id": f"P{n:03d}",
                "product_name": f"{ADJECTIVES[(n - 1) // 8 % 8]} {category.removesuffix('s')} {n}",
                "category": category,
                "price": round(rng.uniform(3, 400), 2),
                "launched": dt.date(2021, 1, 1) + dt.timedelta(days=rng.randrange(1000)),
                "rating": None if rng.random() < 0.1 else round(rng.uniform(2.5, 5.0), 1),
            }
        )
    return pl.DataFrame(rows)


def orders(rng: random.Random, prices: dict[str, float], n_customers: int) -> pl.DataFrame:
    rows = []
    start = dt.date(2023, 1, 1)
    for n in range(1, 1501):
        product = f"P{rng.randint(1, len(prices)):03d}"
        quantity = rng.choices(range(1, 9), weights=(30, 22, 15, 10, 8, 6, 5, 4))[0]
        discount = rng.choice((0.0, 0.0, 0.0, 0.05, 0.1, 0.2))
        amount = round(quantity * prices[product] * (1 - discount), 2)
        rows.append(
            {
                "order_id": n,
                "customer_id": f"C{min(int(rng.paretovariate(1.2)), n_customers):04d}"
                if rng.random() < 0.3
                else f"C{rng.randint(1, n_customers):04d}",
                "product_id": product,
                "order_date": start + dt.timedelta(days=rng.randrange(547)),
                "quantity": quantity,
                "discount": discount,
                "amount": None if rng.random() < 0.04 else amount,
                "status": rng.choices(
                    ("completed", "refunded", "pending", "cancelled"), weights=(70, 10, 12, 8)
                )[0],
                "channel": None if rng.random() < 0.05 else rng.choice(("web", "store", "phone")),
            }
        )
    return pl.DataFrame(rows).sort("order_date", "order_id")


def main(out: Path = HERE) -> None:
    rng = random.Random(SEED)
    people = customers(rng)
    items = products(rng)
    prices = dict(zip(items["product_id"], items["price"], strict=True))
    orders(rng, prices, len(people)).write_csv(out / "orders.csv")
    with (out / "customers.jsonl").open("w") as fh:
        for row in people:
            fh.write(json.dumps(row) + "\n")
    items.write_parquet(out / "products.parquet", statistics=False)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
