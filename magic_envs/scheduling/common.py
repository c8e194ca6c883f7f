"""What the scheduling envs share: vocabularies per split, clock formatting, and knob ranges.

Names are one word: NATURAL PLAN's trip parser reads cities as single tokens (`\\w+`), and one-word
locations keep the meeting parser's "travel to X in" split unambiguous. OOD splits draw from vocabularies
that IID splits never use, so a model cannot have memorised them.
"""

from __future__ import annotations

import numpy as np

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")

PEOPLE = {
    "iid": ("Aaron", "Adam", "Albert", "Alice", "Amanda", "Amy", "Andrea", "Andrew", "Angela", "Ann", "Anthony",
            "Arthur", "Barbara", "Betty", "Bobby", "Brandon", "Brenda", "Brian", "Bruce", "Carl", "Carol",
            "Catherine", "Charles", "Cheryl", "Christine", "Cynthia", "Daniel", "David", "Deborah", "Denise",
            "Diana", "Donald", "Doris", "Dorothy", "Douglas", "Edward", "Elizabeth", "Emily", "Eric", "Eugene",
            "Evelyn", "Frances", "Gary", "George", "Gloria", "Gregory", "Harold", "Helen", "Henry", "Jacob",
            "James", "Janet", "Jason", "Jean", "Jeffrey", "Jennifer", "Jessica", "Joan", "John", "Joseph",
            "Joyce", "Judith", "Julie", "Karen", "Kathleen", "Kenneth", "Kevin", "Larry", "Laura", "Lisa",
            "Margaret", "Maria", "Mark", "Mary", "Matthew", "Melissa", "Michael", "Nancy", "Nicholas",
            "Pamela", "Patricia", "Patrick", "Paul", "Peter", "Philip", "Rachel", "Raymond", "Rebecca",
            "Richard", "Robert", "Roger", "Ronald", "Russell", "Ruth", "Samuel", "Sandra", "Sarah", "Scott",
            "Sharon", "Shirley", "Stephanie", "Stephen", "Susan", "Teresa", "Thomas", "Timothy", "Virginia",
            "Walter", "Wayne", "William"),
    "ood": ("Abebe", "Adaeze", "Aiko", "Akira", "Amara", "Anil", "Arjun", "Ayesha", "Bao", "Chidi", "Chiara",
            "Dariusz", "Dmitri", "Emeka", "Esra", "Farid", "Fatima", "Folake", "Giorgos", "Hamid", "Haruto",
            "Hyun", "Ines", "Ingrid", "Jiho", "Kaito", "Kavya", "Kemal", "Kofi", "Lakshmi", "Leilani", "Lucia",
            "Mateus", "Mehmet", "Mei", "Minh", "Nadia", "Naveen", "Nkechi", "Olumide", "Pavel", "Priya",
            "Quang", "Rafael", "Rania", "Ravi", "Sakura", "Santiago", "Seo", "Sione", "Sunita", "Tariq",
            "Thabo", "Tomasz", "Usha", "Valentina", "Wei", "Xiomara", "Yara", "Yusuf", "Zainab", "Zoltan"),
}

# NATURAL PLAN's 48 one-word European cities, and unseen cities elsewhere for OOD.
CITIES = {
    "iid": ("Amsterdam", "Athens", "Barcelona", "Berlin", "Brussels", "Bucharest", "Budapest", "Copenhagen",
            "Dublin", "Dubrovnik", "Edinburgh", "Florence", "Frankfurt", "Geneva", "Hamburg", "Helsinki",
            "Istanbul", "Krakow", "Lisbon", "London", "Lyon", "Madrid", "Manchester", "Milan", "Munich",
            "Mykonos", "Naples", "Nice", "Oslo", "Paris", "Porto", "Prague", "Reykjavik", "Riga", "Rome",
            "Salzburg", "Santorini", "Seville", "Split", "Stockholm", "Stuttgart", "Tallinn", "Valencia",
            "Venice", "Vienna", "Vilnius", "Warsaw", "Zurich"),
    "ood": ("Accra", "Auckland", "Bangkok", "Beijing", "Bogota", "Boston", "Busan", "Cairo", "Casablanca",
            "Chennai", "Chicago", "Colombo", "Dallas", "Delhi", "Denver", "Doha", "Dubai", "Hanoi", "Havana",
            "Houston", "Jakarta", "Karachi", "Kathmandu", "Kyoto", "Lagos", "Lima", "Manila", "Melbourne",
            "Miami", "Montreal", "Mumbai", "Nairobi", "Osaka", "Perth", "Quito", "Santiago", "Seattle", "Seoul",
            "Shanghai", "Singapore", "Sydney", "Taipei", "Tokyo", "Toronto", "Tunis", "Vancouver"),
}
CITY_REGION = {"iid": "European", "ood": "world"}

# One-word neighbourhoods of the city the meeting-planning agent visits.
TOWNS = {
    "iid": ("San Francisco", ("Alamo", "Bayview", "Castro", "Chinatown", "Dogpatch", "Embarcadero", "Excelsior",
                              "Fillmore", "Haight", "Japantown", "Marina", "Mission", "Portola", "Potrero",
                              "Presidio", "Richmond", "Sunset", "Tenderloin")),
    "ood": ("London", ("Belgravia", "Bloomsbury", "Brixton", "Camden", "Chelsea", "Clapham", "Fulham",
                       "Greenwich", "Hackney", "Hampstead", "Islington", "Kensington", "Mayfair", "Peckham",
                       "Shoreditch", "Soho", "Whitechapel", "Wimbledon")),
}


def vocab_split(split: str) -> str:
    """Which vocabulary a split draws from: train and test share one (IID), every OOD split the other."""
    return "iid" if split in ("train", "test") else "ood"


def knob_range(value, name: str, lo: int, hi: int) -> tuple[int, int]:
    """Read a size knob given as an int or a [min, max] pair, checked against what the generator supports."""
    pair = (value, value) if isinstance(value, (int, np.integer)) else tuple(value)
    if len(pair) != 2 or not all(isinstance(v, (int, np.integer)) for v in pair) or pair[0] > pair[1]:
        raise ValueError(f"{name} must be an int or a [min, max] pair of ints, got {value!r}")
    if pair[0] < lo or pair[1] > hi:
        raise ValueError(f"{name} must lie within [{lo}, {hi}], got {value!r}")
    return int(pair[0]), int(pair[1])


def draw(rng: np.random.Generator, pair: tuple[int, int]) -> int:
    return int(rng.integers(pair[0], pair[1] + 1))


def pick(rng: np.random.Generator, pool, k: int) -> list:
    """k distinct items of `pool`, in random order."""
    return [pool[i] for i in rng.choice(len(pool), size=k, replace=False)]


def clock24(minutes: int) -> str:
    """Minutes after midnight as NATURAL PLAN's calendar writes them: 9:00, 13:30."""
    return f"{minutes // 60}:{minutes % 60:02d}"


def clock12(minutes: int) -> str:
    """Minutes after midnight as NATURAL PLAN's meeting task writes them: 9:00AM, 12:30PM."""
    h, m = divmod(minutes % (24 * 60), 60)
    return f"{(h - 1) % 12 + 1}:{m:02d}{'AM' if h < 12 else 'PM'}"
