"""Realistic value pools: places, money and markets. Each pool tags its items "iid" or "ood".

OOD requests draw from the "ood" items only, so an agent evaluated on them meets values it never saw in
training; the simulator knows every item of both vocabularies, so any pool value is a valid argument.
"""

from __future__ import annotations

# name, country, city code, latitude, longitude, UTC offset (standard time), currency
_CITIES_IID = """\
Paris|France|PAR|48.86|2.35|1|EUR
London|United Kingdom|LON|51.51|-0.13|0|GBP
Rome|Italy|ROM|41.90|12.50|1|EUR
Berlin|Germany|BER|52.52|13.40|1|EUR
Madrid|Spain|MAD|40.42|-3.70|1|EUR
Barcelona|Spain|BCN|41.39|2.17|1|EUR
Amsterdam|Netherlands|AMS|52.37|4.90|1|EUR
Vienna|Austria|VIE|48.21|16.37|1|EUR
Prague|Czech Republic|PRG|50.08|14.44|1|CZK
Lisbon|Portugal|LIS|38.72|-9.14|0|EUR
Dublin|Ireland|DUB|53.35|-6.26|0|EUR
Stockholm|Sweden|STO|59.33|18.07|1|SEK
Oslo|Norway|OSL|59.91|10.75|1|NOK
Copenhagen|Denmark|CPH|55.68|12.57|1|DKK
Zurich|Switzerland|ZRH|47.38|8.54|1|CHF
Milan|Italy|MIL|45.46|9.19|1|EUR
Munich|Germany|MUC|48.14|11.58|1|EUR
Brussels|Belgium|BRU|50.85|4.35|1|EUR
Athens|Greece|ATH|37.98|23.73|2|EUR
Warsaw|Poland|WAW|52.23|21.01|1|PLN
Budapest|Hungary|BUD|47.50|19.04|1|HUF
Edinburgh|United Kingdom|EDI|55.95|-3.19|0|GBP
New York|United States|NYC|40.71|-74.01|-5|USD
Chicago|United States|CHI|41.88|-87.63|-6|USD
San Francisco|United States|SFO|37.77|-122.42|-8|USD
Los Angeles|United States|LAX|34.05|-118.24|-8|USD
Boston|United States|BOS|42.36|-71.06|-5|USD
Seattle|United States|SEA|47.61|-122.33|-8|USD
Miami|United States|MIA|25.76|-80.19|-5|USD
Denver|United States|DEN|39.74|-104.99|-7|USD
Toronto|Canada|YTO|43.65|-79.38|-5|CAD
Vancouver|Canada|YVR|49.28|-123.12|-8|CAD
Montreal|Canada|YMQ|45.50|-73.57|-5|CAD"""

_CITIES_OOD = """\
Tokyo|Japan|TYO|35.68|139.69|9|JPY
Seoul|South Korea|SEL|37.57|126.98|9|KRW
Singapore|Singapore|SIN|1.35|103.82|8|SGD
Bangkok|Thailand|BKK|13.76|100.50|7|THB
Mumbai|India|BOM|19.08|72.88|5.5|INR
Delhi|India|DEL|28.61|77.21|5.5|INR
Dubai|United Arab Emirates|DXB|25.20|55.27|4|AED
Cairo|Egypt|CAI|30.04|31.24|2|EGP
Nairobi|Kenya|NBO|-1.29|36.82|3|KES
Lagos|Nigeria|LOS|6.52|3.38|1|NGN
Cape Town|South Africa|CPT|-33.92|18.42|2|ZAR
Sydney|Australia|SYD|-33.87|151.21|10|AUD
Melbourne|Australia|MEL|-37.81|144.96|10|AUD
Auckland|New Zealand|AKL|-36.85|174.76|12|NZD
Sao Paulo|Brazil|SAO|-23.55|-46.63|-3|BRL
Buenos Aires|Argentina|BUE|-34.60|-58.38|-3|ARS
Mexico City|Mexico|MEX|19.43|-99.13|-6|MXN
Lima|Peru|LIM|-12.05|-77.04|-5|PEN
Bogota|Colombia|BOG|4.71|-74.07|-5|COP
Istanbul|Turkey|IST|41.01|28.98|3|TRY
Hanoi|Vietnam|HAN|21.03|105.85|7|VND
Jakarta|Indonesia|JKT|-6.21|106.85|7|IDR
Manila|Philippines|MNL|14.60|120.98|8|PHP
Hong Kong|China|HKG|22.32|114.17|8|HKD
Shanghai|China|SHA|31.23|121.47|8|CNY
Reykjavik|Iceland|REK|64.15|-21.94|0|ISK"""


def _cities(text: str, vocab: str) -> list[dict]:
    rows = []
    for line in text.splitlines():
        name, country, code, lat, lon, utc, cur = line.split("|")
        rows.append({"name": name, "country": country, "code": code, "lat": float(lat), "lon": float(lon),
                     "utc_offset": float(utc), "currency": cur, "vocab": vocab})
    return rows


CITIES = _cities(_CITIES_IID, "iid") + _cities(_CITIES_OOD, "ood")
CITY_BY_KEY = {c["name"].lower(): c for c in CITIES}
CITY_BY_CODE = {c["code"]: c for c in CITIES}
COUNTRIES = sorted({c["country"] for c in CITIES})

# code, plural name, value of one unit in US dollars (the world's base rates; each day jitters them)
CURRENCIES = {
    "USD": ("US dollars", 1.0), "EUR": ("euros", 1.08), "GBP": ("British pounds", 1.27),
    "JPY": ("Japanese yen", 0.0067), "CHF": ("Swiss francs", 1.12), "CAD": ("Canadian dollars", 0.74),
    "AUD": ("Australian dollars", 0.66), "NZD": ("New Zealand dollars", 0.61), "SEK": ("Swedish kronor", 0.095),
    "NOK": ("Norwegian kroner", 0.094), "DKK": ("Danish kroner", 0.145), "PLN": ("Polish zloty", 0.25),
    "CZK": ("Czech koruna", 0.043), "HUF": ("Hungarian forints", 0.0028), "KRW": ("South Korean won", 0.00075),
    "SGD": ("Singapore dollars", 0.74), "THB": ("Thai baht", 0.028), "INR": ("Indian rupees", 0.012),
    "AED": ("UAE dirhams", 0.272), "EGP": ("Egyptian pounds", 0.021), "KES": ("Kenyan shillings", 0.0077),
    "NGN": ("Nigerian naira", 0.00065), "ZAR": ("South African rand", 0.054), "BRL": ("Brazilian reais", 0.2),
    "ARS": ("Argentine pesos", 0.0011), "MXN": ("Mexican pesos", 0.058), "PEN": ("Peruvian soles", 0.27),
    "COP": ("Colombian pesos", 0.00025), "TRY": ("Turkish lira", 0.031), "VND": ("Vietnamese dong", 0.00004),
    "IDR": ("Indonesian rupiah", 0.000063), "PHP": ("Philippine pesos", 0.018), "HKD": ("Hong Kong dollars", 0.128),
    "CNY": ("Chinese yuan", 0.14), "ISK": ("Icelandic kronur", 0.0072),
}
CURRENCY_VOCAB = {"iid": ["USD", "EUR", "GBP", "CHF", "CAD", "SEK", "NOK", "DKK", "PLN", "CZK", "HUF"],
                  "ood": ["JPY", "AUD", "NZD", "KRW", "SGD", "THB", "INR", "AED", "ZAR", "BRL", "MXN", "TRY",
                          "HKD", "CNY"]}

# symbol, company, sector, typical share price in USD
_STOCKS = """\
AAPL|Apple Inc.|Technology|190|iid
MSFT|Microsoft Corporation|Technology|410|iid
GOOGL|Alphabet Inc.|Technology|150|iid
AMZN|Amazon.com Inc.|Consumer Discretionary|180|iid
NVDA|NVIDIA Corporation|Technology|120|iid
META|Meta Platforms Inc.|Communication Services|480|iid
TSLA|Tesla Inc.|Consumer Discretionary|200|iid
JPM|JPMorgan Chase & Co.|Financials|200|iid
V|Visa Inc.|Financials|270|iid
JNJ|Johnson & Johnson|Health Care|155|iid
WMT|Walmart Inc.|Consumer Staples|65|iid
KO|The Coca-Cola Company|Consumer Staples|62|iid
DIS|The Walt Disney Company|Communication Services|100|iid
NFLX|Netflix Inc.|Communication Services|620|iid
INTC|Intel Corporation|Technology|32|iid
XOM|Exxon Mobil Corporation|Energy|115|ood
PEP|PepsiCo Inc.|Consumer Staples|170|ood
AMD|Advanced Micro Devices Inc.|Technology|160|ood
IBM|International Business Machines|Technology|180|ood
ORCL|Oracle Corporation|Technology|125|ood
NKE|Nike Inc.|Consumer Discretionary|95|ood
MCD|McDonald's Corporation|Consumer Discretionary|280|ood
BA|The Boeing Company|Industrials|180|ood
SBUX|Starbucks Corporation|Consumer Discretionary|85|ood
ADBE|Adobe Inc.|Technology|500|ood
PFE|Pfizer Inc.|Health Care|28|ood"""
STOCKS = {s: {"symbol": s, "company": c, "sector": sec, "base_price": float(p), "vocab": v}
          for s, c, sec, p, v in (line.split("|") for line in _STOCKS.splitlines())}

CRYPTO = {"BTC": ("Bitcoin", 60000.0), "ETH": ("Ethereum", 3000.0), "SOL": ("Solana", 150.0),
          "ADA": ("Cardano", 0.45), "DOGE": ("Dogecoin", 0.15), "XRP": ("XRP", 0.5), "DOT": ("Polkadot", 7.0),
          "LTC": ("Litecoin", 80.0)}

# code, search keywords, display noun, price range in USD
PRODUCT_CATEGORIES = {
    "HPH": (("headphones", "earbuds", "headset"), "Headphones", (30, 350)),
    "LAP": (("laptop", "notebook"), "Laptop", (450, 2500)),
    "PHN": (("smartphone", "phone"), "Smartphone", (200, 1300)),
    "WCH": (("smartwatch", "watch"), "Smartwatch", (80, 600)),
    "CAM": (("camera",), "Camera", (150, 2000)),
    "SPK": (("speaker", "speakers"), "Bluetooth Speaker", (25, 300)),
    "KBD": (("keyboard",), "Keyboard", (20, 200)),
    "MON": (("monitor", "display"), "Monitor", (120, 900)),
    "SHO": (("shoes", "sneakers"), "Running Shoes", (50, 220)),
    "BAG": (("backpack", "bag"), "Backpack", (25, 180)),
    "CFM": (("coffee", "espresso"), "Coffee Maker", (30, 400)),
    "BLN": (("blender",), "Blender", (25, 250)),
    "TAB": (("tablet",), "Tablet", (120, 1100)),
    "VAC": (("vacuum",), "Vacuum Cleaner", (80, 700)),
    "LMP": (("lamp",), "Desk Lamp", (15, 120)),
}
PRODUCT_QUERIES = {"iid": ["wireless headphones", "laptop", "smartphone", "smartwatch", "bluetooth speaker",
                           "mechanical keyboard", "4k monitor", "running shoes", "backpack", "coffee maker"],
                   "ood": ["noise cancelling earbuds", "camera", "espresso machine", "blender", "tablet",
                           "robot vacuum", "desk lamp", "gaming headset"]}
BRANDS = ("Nordvik", "Zentra", "Lumio", "Arden", "Veltro", "Orion", "Pixelis", "Brava", "Solace", "Kaito")
MODEL_WORDS = ("Pro", "Air", "Max", "Lite", "Ultra", "Studio", "Go", "Plus", "One", "Flex")
PRODUCTS_PER_CATEGORY = 20
