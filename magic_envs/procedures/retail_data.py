"""Procedurally generated retail databases in tau2-bench's schema (see retail_tools for the data model).

`generate_db(rng, size)` draws a store: products (each a product type with 4-10 variants over its own option
axes), users (1-3 payment methods each) and orders in all seven tau2 statuses. Every record is a state the
retail tools could have produced, so the invariants below hold (tests check them over many seeds):

* ids follow tau2's formats: 10-digit product and item ids (one shared namespace), `#W` + 7 digits for orders,
  `first_last_1234` users, `credit_card_1234567` / `paypal_...` / `gift_card_...` payment methods, 12-digit
  tracking ids; every dict key equals the id inside its record; names + zip and emails identify one user;
* every product has at least two available variants (so each item can change to another available one) and,
  with three or more, at least one unavailable variant;
* an order item copies its variant's name, price and options; the order's user owns every payment method
  it names; a user's `orders` list is exactly that user's orders, in order;
* payments net of refunds equal the items' total (zero for a cancelled order, which also has a reason);
  "pending (item modified)" carries the extra payment or refund of its item change;
* pending orders have no fulfillment, all others exactly one covering all items (as tau2's data);
* "exchange requested" / "return requested" hold what the tools record (sorted item lists, the payment
  method, the rounded price difference), and an exchange's gift card covers its difference;
* the seven optional order fields are always present (None when unset), so hashes match tau2's model dump;
  prices, amounts and balances are floats rounded to cents.

Vocabularies (first and last names, streets, cities, product types with their options) are module word
lists; `ood=True` draws from a disjoint set of each. Counts scale with `size`: 20 products (capped by the
product vocabulary: 30 in-distribution, 24 OOD types), 40 users and 80 orders per unit. Only `rng` is
used, so equal seeds give equal databases.
"""

from __future__ import annotations

import numpy as np

from magic_envs.procedures.retail_tools import OPTIONAL_ORDER_FIELDS, STATUSES

# ------------------------------------------------------------------------------------------- vocabularies

FIRST_NAMES = ("Noah", "Olivia", "Liam", "Emma", "Ethan", "Ava", "Mason", "Sophia", "Lucas", "Mia", "Aiden",
               "Isabella", "James", "Amelia", "Omar", "Yara", "Ivan", "Anya", "Fatima", "Mei", "Raj", "Priya",
               "Daniel", "Sara", "Chen", "Lena", "Mateo", "Lucia", "Kenji", "Aisha", "Hugo", "Nora", "Felix", "Zoe",
               "Arjun", "Leila", "Samuel", "Grace", "Diego", "Hana")
LAST_NAMES = ("Brown", "Smith", "Garcia", "Nguyen", "Santos", "Li", "Sanchez", "Kim", "Patel", "Johnson", "Lopez",
              "Wilson", "Anderson", "Martin", "Lee", "Clark", "Lewis", "Walker", "Young", "Hall", "Allen", "Wright",
              "Scott", "Green", "Baker", "Adams", "Nelson", "Hill", "Campbell", "Mitchell", "Roberts", "Carter",
              "Phillips", "Evans", "Turner", "Torres", "Parker", "Collins", "Edwards", "Stewart")
STREETS = ("Main Street", "Oak Street", "Maple Avenue", "Cedar Lane", "Park Avenue", "Elm Street", "Lakeview Drive",
           "Hillcrest Road", "River Road", "Sunset Drive", "Willow Lane", "Pine Street", "Chestnut Street",
           "Highland Avenue", "Spring Street", "Broadway", "Washington Avenue", "Lincoln Street", "Church Street",
           "Mill Road")
CITIES = (("Denver", "CO", "802"), ("Austin", "TX", "787"), ("Seattle", "WA", "981"), ("Boston", "MA", "021"),
          ("Chicago", "IL", "606"), ("Phoenix", "AZ", "850"), ("Atlanta", "GA", "303"), ("Portland", "OR", "972"),
          ("San Diego", "CA", "921"), ("Nashville", "TN", "372"), ("Columbus", "OH", "432"),
          ("Charlotte", "NC", "282"), ("Philadelphia", "PA", "191"), ("Houston", "TX", "770"),
          ("San Francisco", "CA", "941"), ("Minneapolis", "MN", "554"))

OOD_FIRST_NAMES = ("Bjorn", "Ingrid", "Tariq", "Nadia", "Quentin", "Solveig", "Emeka", "Chiara", "Rafael", "Keiko",
                   "Dmitri", "Amara", "Thiago", "Freya", "Kwame", "Ximena", "Lorenzo", "Svetlana", "Idris",
                   "Marisol", "Tobias", "Yusuf", "Elif", "Cosmo", "Rosalind")
OOD_LAST_NAMES = ("Okafor", "Lindqvist", "Moreau", "Haddad", "Kowalski", "Takahashi", "Ferreira", "Novak", "Abara",
                  "Castellano", "Bergstrom", "Dubois", "Ivanova", "Mensah", "Rossi", "Quispe", "Nakamura",
                  "Oyelaran", "Petrov", "Vasquez", "Holm", "Achterberg", "Zielinski", "Fontaine", "Mwangi")
OOD_STREETS = ("Juniper Court", "Magnolia Way", "Sycamore Terrace", "Aspen Boulevard", "Birchwood Circle",
               "Cypress Row", "Hawthorn Path", "Larkspur Trail", "Quarry Street", "Foxglove Crescent",
               "Tamarack Alley", "Heron Point Road")
OOD_CITIES = (("Boise", "ID", "837"), ("Tucson", "AZ", "857"), ("Omaha", "NE", "681"), ("Richmond", "VA", "232"),
              ("Spokane", "WA", "992"), ("Savannah", "GA", "314"), ("Madison", "WI", "537"),
              ("Albuquerque", "NM", "871"), ("Anchorage", "AK", "995"), ("Burlington", "VT", "054"),
              ("Fargo", "ND", "581"), ("Tulsa", "OK", "741"))

# (name, lowest price, highest price, {option: values}); values are "|"-separated.
PRODUCTS = (
    ("T-Shirt", 15, 60, {"color": "red|blue|black|white|green", "size": "S|M|L|XL", "material": "cotton|polyester"}),
    ("Running Shoes", 60, 220, {"size": "7|8|9|10|11", "color": "black|white|red", "sole": "rubber|EVA"}),
    ("Backpack", 40, 250, {"color": "black|grey|navy|green", "size": "small|medium|large",
                           "material": "nylon|leather|polyester"}),
    ("Mechanical Keyboard", 70, 300, {"switch type": "linear|tactile|clicky", "backlight": "none|white|RGB",
                                      "size": "full size|80%|60%"}),
    ("Headphones", 50, 400, {"type": "over-ear|on-ear|in-ear", "connectivity": "wired|wireless",
                             "color": "black|white|blue"}),
    ("Coffee Maker", 40, 300, {"color": "black|stainless steel|white", "capacity": "4 cups|8 cups|12 cups",
                               "type": "drip|french press|pour over"}),
    ("Tea Kettle", 20, 120, {"material": "stainless steel|glass|ceramic", "capacity": "1 liter|1.5 liters|2 liters",
                             "stovetop compatibility": "gas|induction|electric"}),
    ("Desk Lamp", 20, 150, {"color": "black|white|silver", "brightness": "low|medium|high",
                            "power source": "AC adapter|USB|battery"}),
    ("Water Bottle", 10, 60, {"capacity": "500ml|750ml|1000ml", "material": "plastic|stainless steel|glass",
                              "color": "blue|red|black|green"}),
    ("Yoga Mat", 20, 120, {"thickness": "4mm|6mm|8mm", "material": "PVC|natural rubber|TPE",
                           "color": "pink|purple|blue|green"}),
    ("Laptop", 600, 3000, {"screen size": "13-inch|15-inch|17-inch", "processor": "i5|i7|i9",
                           "ram": "8GB|16GB|32GB", "storage": "256GB SSD|512GB SSD|1TB SSD"}),
    ("Smartphone", 300, 1300, {"color": "black|silver|gold|blue", "storage": "64GB|128GB|256GB",
                               "screen size": "6.1-inch|6.7-inch"}),
    ("Tablet", 200, 1200, {"screen size": "8-inch|10-inch|12-inch", "storage": "64GB|128GB|256GB",
                           "color": "black|silver|gold"}),
    ("Smart Watch", 100, 500, {"color": "black|silver|gold", "band material": "silicone|leather|metal",
                               "display": "LCD|AMOLED"}),
    ("Wireless Earbuds", 40, 300, {"color": "black|white|blue", "battery life": "4 hours|6 hours|8 hours",
                                   "water resistance": "IPX4|IPX7|none"}),
    ("Bluetooth Speaker", 30, 350, {"color": "black|blue|red|green", "battery life": "10 hours|20 hours",
                                    "water resistance": "yes|no"}),
    ("Office Chair", 100, 600, {"material": "mesh|leather|fabric", "color": "black|grey|blue",
                                "armrest": "fixed|adjustable|none"}),
    ("Bookshelf", 60, 500, {"material": "wood|metal|glass", "color": "brown|white|black",
                            "height": "3 ft|4 ft|5 ft|6 ft"}),
    ("Air Purifier", 80, 500, {"room size": "small|medium|large", "filter type": "HEPA|ionic|carbon",
                               "features": "quiet operation|night mode|smart sensors"}),
    ("Vacuum Cleaner", 80, 700, {"type": "upright|canister|robotic", "bagged/bagless": "bagged|bagless",
                                 "features": "HEPA filter|pet hair removal|cordless"}),
    ("Electric Kettle", 20, 150, {"capacity": "1L|1.5L|2L", "material": "plastic|stainless steel|glass",
                                  "color": "black|white|silver"}),
    ("Sunglasses", 50, 300, {"frame color": "black|brown|silver", "lens color": "green|brown|black",
                             "lens type": "polarized|non-polarized"}),
    ("Hiking Boots", 80, 300, {"size": "8|9|10|11|12", "material": "leather|synthetic", "waterproof": "yes|no"}),
    ("Garden Hose", 20, 120, {"length": "25ft|50ft|100ft", "material": "rubber|vinyl|latex",
                              "color": "green|blue|black"}),
    ("Skateboard", 50, 250, {"deck material": "maple|bamboo|plastic", "length": "28 inch|31 inch|34 inch",
                             "design": "plain|graphic|custom"}),
    ("Jigsaw Puzzle", 10, 60, {"pieces": "500|1000|1500|2000", "theme": "animals|landscape|art",
                               "difficulty level": "beginner|intermediate|expert"}),
    ("Wall Clock", 20, 150, {"diameter": "10 inches|12 inches|14 inches", "color": "black|white|wood",
                             "type": "analog|digital"}),
    ("Notebook", 5, 40, {"size": "A4|A5|pocket", "cover type": "hard cover|soft cover"}),
    ("Portable Charger", 20, 120, {"capacity": "5000mAh|10000mAh|20000mAh", "output": "USB-A|USB-C|wireless",
                                   "color": "black|white|blue"}),
    ("Dumbbell Set", 40, 400, {"weight range": "5-25 lbs|30-50 lbs|55-75 lbs", "material": "iron|rubber|urethane",
                               "set type": "fixed|adjustable"}),
)
OOD_PRODUCTS = (
    ("Kayak Paddle", 40, 300, {"blade material": "fiberglass|carbon|plastic", "length": "220cm|230cm|240cm",
                               "shaft": "straight|bent"}),
    ("Sewing Machine", 120, 900, {"stitch count": "30|60|120", "type": "mechanical|computerized",
                                  "color": "white|pink|grey"}),
    ("Telescope", 150, 1500, {"aperture": "70mm|102mm|130mm|150mm", "mount": "altazimuth|equatorial",
                              "type": "refractor|reflector"}),
    ("Aquarium", 40, 600, {"volume": "10 gallons|20 gallons|40 gallons", "shape": "rectangular|bow front|cube",
                           "lighting": "LED|none"}),
    ("Stand Mixer", 150, 700, {"bowl size": "4.5 quart|5 quart|6 quart", "color": "red|cream|black|silver",
                               "power": "300W|500W|1000W"}),
    ("Rice Cooker", 30, 300, {"capacity": "3 cups|5 cups|10 cups", "inner pot": "nonstick|ceramic|stainless",
                              "color": "white|black"}),
    ("Drone", 200, 2000, {"camera": "1080p|4K|6K", "flight time": "20 minutes|30 minutes|45 minutes",
                          "range": "2 km|6 km|10 km"}),
    ("Electric Guitar", 200, 2500, {"body": "solid|semi-hollow", "finish": "sunburst|black|cherry|natural",
                                    "pickups": "single coil|humbucker"}),
    ("Tent", 80, 700, {"capacity": "2 person|4 person|6 person", "season": "3-season|4-season",
                       "color": "orange|green|grey"}),
    ("Sleeping Bag", 40, 400, {"temperature rating": "0F|20F|40F", "fill": "down|synthetic",
                               "shape": "mummy|rectangular"}),
    ("Bread Maker", 60, 350, {"loaf size": "1 lb|1.5 lb|2 lb", "programs": "12|19|25", "color": "black|white"}),
    ("Standing Desk", 200, 1200, {"width": "48 inch|55 inch|60 inch", "top material": "bamboo|laminate|walnut",
                                  "motor": "single|dual"}),
    ("Fountain Pen", 15, 400, {"nib size": "extra fine|fine|medium|broad", "barrel": "resin|brass|wood",
                               "filling": "cartridge|piston"}),
    ("Board Game", 15, 120, {"players": "2-4|2-6|1-8", "edition": "standard|deluxe|collector",
                             "language": "English|Spanish|French"}),
    ("Baby Stroller", 100, 1200, {"type": "jogging|travel system|lightweight", "color": "black|grey|navy",
                                  "fold": "one-hand|two-hand"}),
    ("Massage Gun", 50, 450, {"speed levels": "5|20|30", "attachments": "4|6|10", "color": "black|grey|mint"}),
    ("Projector", 150, 2500, {"resolution": "720p|1080p|4K", "brightness": "2000 lumens|3500 lumens|5000 lumens",
                              "throw": "standard|short throw"}),
    ("Humidifier", 30, 250, {"tank size": "2L|4L|6L", "mist": "cool|warm|dual", "color": "white|black|wood"}),
    ("Snowboard", 200, 900, {"length": "148cm|154cm|160cm", "profile": "camber|rocker|hybrid",
                             "flex": "soft|medium|stiff"}),
    ("Bird Feeder", 15, 120, {"style": "tube|hopper|platform", "capacity": "1 lb|3 lbs|5 lbs",
                              "material": "metal|cedar|recycled plastic"}),
    ("Cast Iron Skillet", 20, 150, {"diameter": "8 inch|10 inch|12 inch", "finish": "pre-seasoned|enameled",
                                    "handle": "single|dual"}),
    ("Label Printer", 40, 300, {"connectivity": "USB|Bluetooth|Wi-Fi", "max label width": "12mm|24mm|62mm",
                                "color": "white|black"}),
    ("Hammock", 30, 250, {"material": "cotton rope|nylon|polyester", "capacity": "1 person|2 person",
                          "color": "striped|blue|green"}),
    ("Microscope", 100, 1500, {"magnification": "40x-400x|40x-1000x|40x-2000x", "head": "monocular|binocular",
                               "light": "LED|halogen"}),
)


class _Rand:
    """Draws from `rng` in blocks of uniforms: one numpy call per block instead of one per draw keeps a
    size-1 store at a few milliseconds. Also hands out unique ids (one namespace: tau2's ids never collide)."""

    def __init__(self, rng: np.random.Generator):
        self.rng, self.block, self.taken = rng, [], set()

    def u(self) -> float:
        if not self.block:
            self.block = self.rng.random(1024).tolist()[::-1]
        return self.block.pop()

    def randint(self, lo: int, hi: int) -> int:
        """Uniform in [lo, hi)."""
        return lo + int(self.u() * (hi - lo))

    def pick(self, seq):
        return seq[int(self.u() * len(seq))]

    def sample(self, n: int, k: int) -> list[int]:
        """k distinct indices of range(n), in random order (a partial Fisher-Yates shuffle)."""
        pool = list(range(n))
        for i in range(k):
            j = self.randint(i, n)
            pool[i], pool[j] = pool[j], pool[i]
        return pool[:k]

    def price(self, lo: float, hi: float) -> float:
        return round(lo + self.u() * (hi - lo), 2)

    def digits(self, n: int) -> str:
        while True:
            value = str(self.randint(10 ** (n - 1), 10 ** n))
            if value not in self.taken:
                self.taken.add(value)
                return value


_ITEM_COUNT_CUM = (.3, .55, .75, .9, 1.0)  # 1-5 items per order


def _weighted(r: _Rand, cum) -> int:
    x, i = r.u() * cum[-1], 0
    while cum[i] <= x:
        i += 1
    return i


_STATUS_P = {"pending": .38, "delivered": .32, "processed": .10, "cancelled": .10, "pending (item modified)": .03,
             "exchange requested": .035, "return requested": .035}
_STATUS_LIST = list(_STATUS_P)
_STATUS_CUM = tuple(np.cumsum(list(_STATUS_P.values())).tolist())


def _products(r: _Rand, kinds, n: int) -> dict:
    products = {}
    for k in r.sample(len(kinds), n):
        name, lo, hi, axes = kinds[k]
        axes = [(key, values.split("|")) for key, values in axes.items()]
        combos = 1
        for _, values in axes:
            combos *= len(values)
        count = min(combos, r.randint(4, 11))
        base = lo + r.u() * (hi - lo)
        # Each item must be able to move to another available variant; some "not available" errors must exist.
        available = [True, True] + ([False] if count >= 3 else []) + [r.u() < 0.7 for _ in range(count - 3)]
        available = [available[i] for i in r.sample(count, count)]
        variants = {}
        for code, avail in zip(r.sample(combos, count), available):
            options = {}
            for key, values in axes:  # mixed-radix digits of the combination index
                code, digit = divmod(code, len(values))
                options[key] = values[digit]
            item_id = r.digits(10)
            variants[item_id] = {"item_id": item_id, "options": options, "available": avail,
                                 "price": r.price(0.8 * base, 1.25 * base)}
        product_id = r.digits(10)
        products[product_id] = {"name": name, "product_id": product_id, "variants": variants}
    return products


def _address(r: _Rand, streets, cities) -> dict:
    city, state, prefix = r.pick(cities)
    return {"address1": f"{r.randint(100, 1000)} {r.pick(streets)}", "address2": f"Suite {r.randint(100, 1000)}",
            "city": city, "country": "USA", "state": state, "zip": f"{prefix}{r.randint(0, 100):02d}"}


def _users(r: _Rand, n: int, firsts, lasts, streets, cities) -> dict:
    users, seen = {}, set()
    sources = ("credit_card", "paypal", "gift_card")
    while len(users) < n:
        first, last = r.pick(firsts), r.pick(lasts)
        address = _address(r, streets, cities)
        user_id = f"{first.lower()}_{last.lower()}_{r.randint(1000, 10000)}"
        email = f"{first.lower()}.{last.lower()}{r.randint(1000, 10000)}@example.com"
        key = (first.lower(), last.lower(), address["zip"])
        if user_id in users or key in seen or email in seen:
            continue  # name + zip and the email must each identify one user
        seen |= {key, email}
        count = 1 + (r.u() > 0.55) + (r.u() > 0.8)
        # Every kind of payment occurs in every store: the first three users get one each.
        kinds = [sources[len(users)]] if len(users) < 3 else []
        kinds += [r.pick(sources) for _ in range(count - len(kinds))]
        methods = {}
        for source in kinds:
            if source == "paypal" and any(m["source"] == "paypal" for m in methods.values()):
                continue  # one paypal account per user
            pm_id = f"{source}_{r.digits(7)}"
            if source == "credit_card":
                methods[pm_id] = {"source": source, "id": pm_id, "brand": r.pick(("visa", "mastercard")),
                                  "last_four": f"{r.randint(0, 10000):04d}"}
            elif source == "gift_card":
                methods[pm_id] = {"source": source, "id": pm_id, "balance": r.price(0, 150)}
            else:
                methods[pm_id] = {"source": source, "id": pm_id}
        users[user_id] = {"user_id": user_id, "name": {"first_name": first, "last_name": last},
                          "address": address, "email": email, "payment_methods": methods, "orders": []}
    return users


def _other_variant(r: _Rand, product: dict, item_id: str, *, available: bool) -> dict:
    """A variant of the product other than item_id (available ones only if asked; there are always two)."""
    return r.pick([v for k, v in product["variants"].items() if k != item_id and (v["available"] or not available)])


def _payment(kind: str, amount: float, pm_id: str) -> dict:
    return {"transaction_type": kind, "amount": amount, "payment_method_id": pm_id}


def _order(r: _Rand, order_id: str, user: dict, products: dict, product_ids: list, status: str,
           streets, cities) -> dict:
    items = []
    for p in r.sample(len(product_ids), min(len(product_ids), 1 + _weighted(r, _ITEM_COUNT_CUM))):
        product = products[product_ids[p]]
        variant = r.pick(list(product["variants"].values()))
        items.append({"name": product["name"], "product_id": product["product_id"], "item_id": variant["item_id"],
                      "price": variant["price"], "options": dict(variant["options"])})
    if r.u() < 0.03:  # tau2's data has a few orders holding the same item twice
        items.append({**items[0], "options": dict(items[0]["options"])})
    # Orders mostly ship to the user's current address; some to an address the user had before.
    address = dict(user["address"]) if r.u() < 0.85 else _address(r, streets, cities)
    methods = list(user["payment_methods"].values())
    pm_id = r.pick(methods)["id"]
    total = round(sum(i["price"] for i in items), 2)
    order = {"order_id": order_id, "user_id": user["user_id"], "address": address, "items": items,
             "status": status, "fulfillments": [], "payment_history": [_payment("payment", total, pm_id)],
             **dict.fromkeys(OPTIONAL_ORDER_FIELDS)}
    if "pending" not in status:
        order["fulfillments"] = [{"tracking_id": [r.digits(12)], "item_ids": [i["item_id"] for i in items]}]
    if status == "cancelled":
        order["payment_history"].append(_payment("refund", total, pm_id))
        order["cancel_reason"] = r.pick(("no longer needed", "ordered by mistake"))
    elif status == "pending (item modified)":
        # One item was changed from another variant; the first payment covered the old price.
        item = r.pick(items)
        old = _other_variant(r, products[item["product_id"]], item["item_id"], available=False)
        diff = round(item["price"] - old["price"], 2)
        order["payment_history"] = [_payment("payment", round(total - diff, 2), pm_id),
                                    _payment("payment" if diff > 0 else "refund", abs(diff), r.pick(methods)["id"])]
    elif status in ("exchange requested", "return requested"):
        chosen = [items[k] for k in r.sample(len(items), r.randint(1, len(items) + 1))]
        old_ids = sorted(i["item_id"] for i in chosen)
        method = r.pick(methods)
        if status == "return requested":
            if method["source"] != "gift_card":  # refunds go to the original method or a gift card
                method = user["payment_methods"][pm_id]
            order.update(return_items=old_ids, return_payment_method_id=method["id"])
        else:
            new = [_other_variant(r, products[i["product_id"]], i["item_id"], available=True) for i in chosen]
            diff = round(sum(v["price"] for v in new) - sum(i["price"] for i in chosen), 2)
            if method["source"] == "gift_card" and method["balance"] < diff:
                method["balance"] = round(diff + r.price(0, 50), 2)  # the tool checked it could pay
            order.update(exchange_items=old_ids, exchange_new_items=sorted(v["item_id"] for v in new),
                         exchange_payment_method_id=method["id"], exchange_price_difference=diff)
    return order


def generate_db(rng: np.random.Generator, size: int = 1, *, ood: bool = False) -> dict:
    """A retail database {products, users, orders} in tau2's schema, drawn from `rng` only."""
    if size < 1:
        raise ValueError(f"size must be at least 1, got {size}")
    kinds = OOD_PRODUCTS if ood else PRODUCTS
    firsts, lasts = (OOD_FIRST_NAMES, OOD_LAST_NAMES) if ood else (FIRST_NAMES, LAST_NAMES)
    streets, cities = (OOD_STREETS, OOD_CITIES) if ood else (STREETS, CITIES)
    r = _Rand(rng)
    products = _products(r, kinds, min(len(kinds), 20 * size))
    users = _users(r, 40 * size, firsts, lasts, streets, cities)
    user_list, product_ids = list(users.values()), list(products)
    n_orders = 80 * size
    statuses = [_STATUS_LIST[_weighted(r, _STATUS_CUM)] for _ in range(n_orders)]
    for slot, status in zip(r.sample(n_orders, len(STATUSES)), STATUSES):
        statuses[slot] = status  # every status occurs at least once
    orders = {}
    for status in statuses:
        user = r.pick(user_list)
        order_id = f"#W{r.digits(7)}"
        orders[order_id] = _order(r, order_id, user, products, product_ids, status, streets, cities)
        user["orders"].append(order_id)
    return {"products": products, "users": users, "orders": orders}
