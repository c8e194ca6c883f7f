"""Word lists the Workspace world is built from: people, companies, merchants, products, texts.

Plain tuples, read by `workspace_world` (the initial world) and `workspace_subgoals` (what tasks plant).
"""

FIRST = ("Alice", "Bruno", "Chloe", "Daniel", "Elena", "Farid", "Grace", "Hugo", "Ingrid", "Jonas", "Keiko", "Liam",
         "Maya", "Nikolai", "Olivia", "Pedro", "Quinn", "Rosa", "Samir", "Tara", "Umar", "Vera", "Wen", "Ximena",
         "Yusuf", "Zoe", "Anika", "Boris", "Carmen", "Dmitri", "Esther", "Felix", "Gina", "Henrik", "Isla", "Jamal")
LAST = ("Okafor", "Lindqvist", "Moreau", "Haddad", "Kowalski", "Tanaka", "Ferreira", "Novak", "Brennan", "Castillo",
        "Schmidt", "Rossi", "Nguyen", "Petrov", "Dubois", "Yilmaz", "Andersen", "Costa", "Fischer", "Ibarra",
        "Jensen", "Kaur", "Larsen", "Mendes", "Ortega", "Park", "Quispe", "Romano", "Sato", "Varga")
COMPANIES = (("Northwind Analytics", "northwind.io"), ("Bluepeak Studio", "bluepeak.design"),
             ("Corvid Systems", "corvid.dev"), ("Helio Energy", "helio-energy.com"), ("Lumen Legal", "lumenlegal.eu"),
             ("Quarry & Co", "quarryco.com"), ("Tidewater Labs", "tidewater.ai"), ("Vantage Health", "vantage.health"),
             ("Orchard Media", "orchardmedia.net"), ("Greyline Logistics", "greyline.eu"))
TOPICS = ("budget review", "quarterly report", "website redesign", "onboarding plan", "supplier contract",
          "marketing launch", "data migration", "office move", "hiring round", "security audit", "roadmap",
          "customer survey")
NEWSLETTERS = (("The Weekly Byte", "news@weeklybyte.com", "Issue"),
               ("Garden Digest", "hello@gardendigest.org", "Edition"),
               ("Urban Runner", "team@urbanrunner.club", "Run notes"), ("Deal Radar", "deals@dealradar.shop", "Deals"),
               ("Cinema Circle", "picks@cinemacircle.film", "Picks"))
VENDORS = (("Hartwell Plumbing", "billing@hartwell-plumbing.com", "plumbing repair"),
           ("Brightline Electric", "accounts@brightline-electric.com", "electrical inspection"),
           ("Pine Ridge Landscaping", "office@pineridge-landscaping.com", "garden maintenance"),
           ("Clearview Windows", "invoices@clearview-windows.com", "window cleaning"),
           ("Oakmont Carpentry", "billing@oakmont-carpentry.com", "shelf installation"),
           ("Swift Movers", "finance@swiftmovers.eu", "furniture transport"),
           ("Keystone IT Support", "billing@keystone-it.net", "laptop repair"),
           ("Harbor Dental", "billing@harbordental.care", "dental check-up"))
PAYEES = (("City Apartments (rent)", "rent"), ("Voltra Power", "electricity"), ("Nimbus Fibre", "internet"),
          ("Peak Fitness", "gym"), ("Safeguard Insurance", "insurance"), ("Water Works Utility", "water"))
MERCHANTS = ("FreshMart", "Corner Bakery", "Bean There Cafe", "Shell Station", "Pharma Plus", "BookNook",
             "Green Grocer", "Metro Transit", "Pasta Palace", "Cinema Royal", "Hardware Hub", "Sushi Go")
PROJECTS = ("Home", "Garden", "Website", "Taxes", "Vacation")
TODO_TITLES = ("Call the insurer", "Renew passport", "Fix the gate", "Order new filters", "Book flights",
               "Update the homepage", "Back up photos", "Sort receipts", "Water the roses", "Pay the gardener",
               "Check the gutters", "Write the blog post", "File expense report", "Buy seeds", "Clean the garage")
CHANNELS = ("general", "team", "ops", "random", "announcements")
CHAT_LINES = ("Morning all!", "Who has the key to the storage room?", "The build is green again.",
              "Reminder: timesheets are due on Friday.", "Anyone up for lunch at 12:30?",
              "I pushed the fix for the login bug.", "The printer on floor 2 is out of toner.",
              "Great job on the release, everyone.", "Can someone review my pull request?",
              "The coffee machine is fixed.", "Don't forget the all-hands at 16:00.")
EVENT_TITLES = ("Team sync", "Project review", "Dentist", "Gym", "Design critique", "Budget meeting",
                "Customer call", "Yoga class", "Planning session", "Book club", "Standup", "Car service")
LOCATIONS = ("Room 4B", "Main office", "Video call", "Cafe Central", "Downtown clinic", "Room 2A", "City library")
BOOKS = ("The Left Hand of Darkness", "Middlemarch", "Project Hail Mary", "The Remains of the Day",
         "Piranesi", "A Gentleman in Moscow", "Stoner", "The Dispossessed")
CITIES = ("Lisbon", "Kyoto", "Reykjavik", "Cape Town", "Montreal", "Tbilisi", "Hanoi", "Valparaiso")
RECIPES = (("Lentil soup", ("red lentils", "onion", "carrot", "cumin", "vegetable stock")),
           ("Banana bread", ("bananas", "flour", "butter", "sugar", "eggs", "baking soda")),
           ("Shakshuka", ("eggs", "tomatoes", "peppers", "onion", "paprika")),
           ("Pesto pasta", ("basil", "pine nuts", "parmesan", "garlic", "olive oil", "pasta")),
           ("Chickpea curry", ("chickpeas", "coconut milk", "onion", "garlic", "curry paste")),
           ("Pancakes", ("flour", "milk", "eggs", "butter", "sugar")))
# kind, category, brands, variant words, price range in cents
PRODUCTS = (("USB-C cable", "electronics", ("Voltix", "Cablo", "Linkra"), ("1 m", "2 m", "3 m"), (599, 1999)),
            ("wireless mouse", "electronics", ("Clicko", "Voltix", "Pointa"), ("compact", "ergonomic"), (1499, 4999)),
            ("desk lamp", "home", ("Lumo", "Brightway", "Nordlys"), ("LED", "clamp", "dimmable"), (1999, 6999)),
            ("coffee beans", "groceries", ("Alto", "Roastery 9", "Kaffa"), ("250 g", "500 g", "1 kg"), (699, 2999)),
            ("notebook", "office", ("Papyr", "Inkwell", "Folio"), ("A5 dotted", "A4 lined", "A5 plain"), (399, 1899)),
            ("printer paper", "office", ("Papyr", "Whitely"), ("500 sheets", "2500 sheets"), (499, 2999)),
            ("AA batteries", "electronics", ("Ampra", "Voltix", "Duracell"), ("4-pack", "12-pack"), (349, 1499)),
            ("water bottle", "sports", ("Hydra", "Flasko", "Trailmate"), ("500 ml", "750 ml", "1 l"), (899, 3499)),
            ("yoga mat", "sports", ("Zenfold", "Flexa"), ("4 mm", "6 mm"), (1999, 5999)),
            ("tea towels", "home", ("Linnea", "Cottonfield"), ("set of 3", "set of 5"), (799, 2499)),
            ("headphones", "electronics", ("Sonora", "Bassline", "Pointa"), ("on-ear", "over-ear", "in-ear"),
             (2999, 14999)),
            ("plant pot", "home", ("Terra", "Greenly"), ("small", "medium", "large"), (599, 3999)))
COUPONS = ("WELCOME5", "SPRING10", "SAVE15", "LOYAL20", "FLASH25", "HELLO10")
FILE_TOPICS = ("warranty", "tax", "insurance", "lease", "manual", "receipt")
