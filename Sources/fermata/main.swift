print("fermata")
